// clusters.cu - what cudaOccupancyMaxActiveClusters answers for clusters of
// 1, 2, 4, 8 and 16 CTAs of 128 threads that take an SM's shared memory (as
// cuBLAS's Hopper GEMMs), and of 128 threads without (several to an SM), and
// the SM count: the read-back of nvtaskset's answers on a GPU.
// nvcc -arch=sm_90 -o clusters clusters.cu; prints one line.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void k(float *p)
{
	extern __shared__ float s[];
	if (p)
		p[threadIdx.x] = s[threadIdx.x];
}

int main()
{
	int sms = 0;
	cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
	int big = 227 * 1024;
	cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, big);
	cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
	printf("sms=%d", sms);
	for (int smem : {big, 0}) {
		printf(" %s:", smem ? "bigsmem" : "nosmem");
		for (int c = 1; c <= 16; c *= 2) {
			cudaLaunchConfig_t cfg = {};
			cudaLaunchAttribute attr;
			attr.id = cudaLaunchAttributeClusterDimension;
			attr.val.clusterDim.x = c;
			attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
			cfg.gridDim = dim3(c);
			cfg.blockDim = dim3(128);
			cfg.dynamicSmemBytes = smem;
			cfg.attrs = &attr;
			cfg.numAttrs = 1;
			int n = -1;
			cudaError_t e = cudaOccupancyMaxActiveClusters(&n, k, &cfg);
			printf(" c%d=%d", c, e == cudaSuccess ? n : -(int)e);
		}
	}
	printf("\n");
	return 0;
}
