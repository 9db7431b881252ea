/* The offsets of every CUPTI record field tprof reads, printed one per
 * line; compiled once against the CUDA 13 headers tprof is built with,
 * and once against each CUPTI 12.x header set (KERNEL_STRUCT names that
 * header's kernel record, MEMCPY_STRUCT and SYNC_STRUCT its copy and
 * synchronization records): tests/optional/test_cupti_layouts.py compares
 * the outputs, so records of CUPTI 12.6-12.9 can be read through the
 * CUDA 13 structs (cupti/convert.c). */
#include <stddef.h>
#include <stdio.h>

#include <cupti.h>

#ifndef KERNEL_STRUCT
#define KERNEL_STRUCT CUpti_ActivityKernel10
#endif
#ifndef MEMCPY_STRUCT
#define MEMCPY_STRUCT CUpti_ActivityMemcpy6
#endif
#ifndef SYNC_STRUCT
#define SYNC_STRUCT CUpti_ActivitySynchronization2
#endif

#define O(s, f) printf("%s.%s %zu\n", #s, #f, offsetof(s, f))
#define K(f) printf("Kernel.%s %zu\n", #f, offsetof(KERNEL_STRUCT, f))
#define M(f) printf("Memcpy.%s %zu\n", #f, offsetof(MEMCPY_STRUCT, f))
#define S(f) printf("Sync.%s %zu\n", #f, offsetof(SYNC_STRUCT, f))

int main(void)
{
	K(kind); K(start); K(end); K(deviceId); K(contextId); K(streamId);
	K(correlationId); K(name); K(gridX); K(gridY); K(gridZ); K(blockX);
	K(blockY); K(blockZ); K(registersPerThread); K(staticSharedMemory);
	K(dynamicSharedMemory); K(graphId); K(graphNodeId);
	M( copyKind); M( srcKind);
	M( dstKind); M( bytes);
	M( start); M( end);
	M( deviceId);
	M( contextId);
	M( streamId);
	M( correlationId);
	M( graphNodeId);
	M( graphId);
	O(CUpti_ActivityMemcpyPtoP4, srcDeviceId);
	O(CUpti_ActivityMemcpyPtoP4, dstDeviceId);
	O(CUpti_ActivityMemcpyPtoP4, start);
	O(CUpti_ActivityMemcpyPtoP4, graphId);
	O(CUpti_ActivityMemset4, value); O(CUpti_ActivityMemset4, bytes);
	O(CUpti_ActivityMemset4, start); O(CUpti_ActivityMemset4, end);
	O(CUpti_ActivityMemset4, streamId);
	O(CUpti_ActivityMemset4, memoryKind);
	O(CUpti_ActivityMemset4, graphId);
	S( type);
	S( start);
	S( end);
	S( correlationId);
	S( contextId);
	S( streamId);
	S( cudaEventId);
	O(CUpti_ActivityMemory4, memoryOperationType);
	O(CUpti_ActivityMemory4, memoryKind);
	O(CUpti_ActivityMemory4, bytes);
	O(CUpti_ActivityMemory4, timestamp);
	O(CUpti_ActivityMemory4, deviceId);
	O(CUpti_ActivityOverhead3, overheadKind);
	O(CUpti_ActivityOverhead3, objectKind);
	O(CUpti_ActivityOverhead3, objectId);
	O(CUpti_ActivityOverhead3, start);
	O(CUpti_ActivityOverhead3, correlationId);
	O(CUpti_ActivityDevice5, name); O(CUpti_ActivityDevice5, id);
	O(CUpti_ActivityDevice5, numMultiprocessors);
	O(CUpti_ActivityDevice5, computeCapabilityMajor);
	O(CUpti_ActivityDevice5, globalMemorySize);
	O(CUpti_ActivityContext3, contextId);
	O(CUpti_ActivityContext3, deviceId);
	return 0;
}
