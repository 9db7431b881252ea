/* Another CUDA tool injected through CUDA_INJECTION64_PATH, as nsys
 * injects its own library: the driver calls its InitializeInjection at
 * cuInit. It takes CUPTI itself in the real thing; here it does nothing,
 * so that whatever loads libcupti in the process is the profiler under
 * test. */
int InitializeInjection(void);

int InitializeInjection(void)
{
	return 1;
}
