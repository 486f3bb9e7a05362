#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "gpu/cuda_driver.h"
typedef unsigned long long DP;
static void *L;
#define F(n) ((int (*)())dlsym(L, n))
static size_t fr(void){size_t f=0,t=0; ((int(*)(size_t*,size_t*))dlsym(L,"cuMemGetInfo_v2"))(&f,&t); return f;}
static int cmp(const void*a,const void*b){DP x=*(DP*)a,y=*(DP*)b;return x<y?-1:x>y;}
int main(void){
	struct stat st; const char *nodes[]={"/dev/nvidiactl","/dev/nvidia0","/dev/nvidia-uvm"};
	for(int i=0;i<3;i++) if(!stat(nodes[i],&st)) printf("%s chr=%d %u:%u\n",nodes[i],S_ISCHR(st.st_mode),major(st.st_rdev),minor(st.st_rdev));
	L=dlopen("libcuda.so.1",RTLD_NOW); if(!L){puts("nolib");return 1;}
	int ver=0; ((int(*)(int*))dlsym(L,"cuDriverGetVersion"))(&ver); printf("driver cuda %d\n",ver);
	void *ctx; ((int(*)(unsigned))dlsym(L,"cuInit"))(0);
	((int(*)(void**,int))dlsym(L,"cuDevicePrimaryCtxRetain"))(&ctx,0); ((int(*)(void*))dlsym(L,"cuCtxSetCurrent"))(ctx);
	int (*alloc)(DP*,size_t)=(int(*)(DP*,size_t))dlsym(L,"cuMemAlloc_v2"); int (*mfree)(DP)=(int(*)(DP))dlsym(L,"cuMemFree_v2");
	size_t sizes[]={1,256,257,512,513,1024,1025,4096,4097,65536,65537,1<<20,(1<<20)+1,2<<20,(2<<20)+1};
	enum{N=4096}; static DP p[N];
	for(unsigned s=0;s<sizeof(sizes)/sizeof(*sizes);s++){
		size_t f0=fr(); int rc=0;
		int n = sizes[s] >= (1<<20) ? 256 : N;
		for(int i=0;i<n;i++) if((rc=alloc(&p[i],sizes[s]))) {printf("rc %d\n",rc);break;}
		size_t f1=fr();
		qsort(p,n,sizeof(DP),cmp); DP mind=~0ull; int hist512=0,hist=0;
		for(int i=1;i<n;i++){DP d=p[i]-p[i-1]; if(d<mind)mind=d;}
		DP minalign=~0ull; for(int i=0;i<n;i++){DP a=p[i]&-p[i]; if(a<minalign)minalign=a;}
		(void)hist512;(void)hist;
		printf("size %zu n %d: free drop %zu (%.1f per alloc) min stride %llu min addr alignment %llu\n",sizes[s],n,f0-f1,(double)(f0-f1)/n,mind,minalign);
		for(int i=0;i<n;i++) mfree(p[i]);
	}
	/* VMM */
	NVT_MEM_ALLOC_PROP prop={0}; prop.type=1; prop.location_type=1; prop.location_id=0;
	uint64_t h=0,h2=0; DP va=0; size_t sz=64<<20;
	size_t f0=fr();
	int rc=((int(*)(uint64_t*,size_t,const void*,unsigned long long))dlsym(L,"cuMemCreate"))(&h,sz,&prop,0);
	printf("create rc=%d drop=%zu\n",rc,f0-fr());
	rc=((int(*)(DP*,size_t,size_t,DP,unsigned long long))dlsym(L,"cuMemAddressReserve"))(&va,sz,0,0,0); printf("reserve rc=%d\n",rc);
	rc=((int(*)(DP,size_t,size_t,uint64_t,unsigned long long))dlsym(L,"cuMemMap"))(va,sz,0,h,0); printf("map rc=%d\n",rc);
	int (*rel)(uint64_t)=(int(*)(uint64_t))dlsym(L,"cuMemRelease"); int (*ret)(uint64_t*,void*)=(int(*)(uint64_t*,void*))dlsym(L,"cuMemRetainAllocationHandle");
	int bad=0; for(int i=0;i<65536;i++){ if(ret(&h2,(void*)va)||h2!=h){bad++;} } printf("65536 retains bad=%d same=%d\n",bad,h2==h);
	bad=0; for(int i=0;i<65536;i++) if(rel(h)) bad++; printf("65536 releases bad=%d drop now=%zu\n",bad,f0-fr());
	rc=rel(h); printf("own release rc=%d drop while mapped=%zu\n",rc,f0-fr());
	rc=rel(h); printf("release again rc=%d\n",rc);
	h2=0; rc=ret(&h2,(void*)va); printf("retain after release rc=%d same=%d\n",rc,h2==h);
	rc=rel(h2); printf("release rc=%d\n",rc);
	rc=((int(*)(DP,size_t))dlsym(L,"cuMemUnmap"))(va,sz); printf("unmap rc=%d drop=%zu\n",rc,f0-fr());
	rc=((int(*)(DP,size_t))dlsym(L,"cuMemAddressFree"))(va,sz); printf("addrfree rc=%d\n",rc);
	return 0;
}
