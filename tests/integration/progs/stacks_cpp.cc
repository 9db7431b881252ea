// A CUDA call reached through C++ functions (a namespace, a class
// template, an overload), for the demangling of stack frames:
//
//   stacks_cpp   main -> model::run(int) -> model::Layer<float>::forward
//                -> cudaMemcpy
#include <cstdio>
#include <vector>

#include <cuda_runtime_api.h>

namespace model {

template <typename T> struct Layer {
	std::vector<T> buf = std::vector<T>(16);

	__attribute__((noinline)) int forward()
	{
		T *p = buf.data();

		return cudaMemcpy(p, p + 8, 8 * sizeof(T),
				  cudaMemcpyHostToDevice) + 1;
	}
};

__attribute__((noinline)) int run(int n)
{
	Layer<float> l;
	int rc = 0;

	for (int i = 0; i < n; i++)
		rc += l.forward();
	return rc + 1;
}

} // namespace model

int main()
{
	int rc = model::run(1);

	std::printf("stacks_cpp done %d\n", rc > 0);
	return 0;
}
