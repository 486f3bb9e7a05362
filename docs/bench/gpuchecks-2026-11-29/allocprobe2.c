/* Probe: how the driver rounds cuMemAllocPitch, cuMemAllocManaged and cuMemAllocAsync, and what
 * cuMemUnmap accepts (part of a mapping, two mappings at once) and when a released handle's
 * memory comes back. Prints facts; decides nothing. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include "gpu/cuda_driver.h"
typedef unsigned long long DP;
static void *L;
static void *sym(const char *n){void *f=dlsym(L,n); if(!f){printf("no %s\n",n);exit(2);} return f;}
static size_t fr(void){size_t f=0,t=0; ((int(*)(size_t*,size_t*))sym("cuMemGetInfo_v2"))(&f,&t); return f;}
static int cmp(const void*a,const void*b){DP x=*(DP*)a,y=*(DP*)b;return x<y?-1:x>y;}
enum{N=2048}; static DP p[N]; static size_t pitch[N];
static void strides(const char *what,size_t req,int n,size_t drop){
	qsort(p,n,sizeof(DP),cmp); DP mind=~0ull, maxd=0; DP minal=~0ull;
	for(int i=1;i<n;i++){DP d=p[i]-p[i-1]; if(d<mind)mind=d; if(d>maxd&&d<(64ull<<20))maxd=d;}
	for(int i=0;i<n;i++){DP a=p[i]&-p[i]; if(a<minal)minal=a;}
	printf("%s req %zu n %d: free drop %zu (%.1f per alloc) min stride %llu max stride<64M %llu min align %llu\n",what,req,n,drop,(double)drop/n,mind,maxd,minal);
}
int main(void){
	L=dlopen("libcuda.so.1",RTLD_NOW); if(!L){puts("nolib");return 1;}
	void *ctx; ((int(*)(unsigned))sym("cuInit"))(0);
	((int(*)(void**,int))sym("cuDevicePrimaryCtxRetain"))(&ctx,0); ((int(*)(void*))sym("cuCtxSetCurrent"))(ctx);
	int (*mfree)(DP)=(int(*)(DP))sym("cuMemFree_v2");
	/* pitch */
	int (*ap)(DP*,size_t*,size_t,size_t,unsigned)=(int(*)(DP*,size_t*,size_t,size_t,unsigned))sym("cuMemAllocPitch_v2");
	size_t pw[][3]={{1,1,4},{100,1,4},{512,1,4},{513,1,4},{1000,3,4},{4096,256,16},{4097,256,16},{100000,100,4},{(1<<20),1,4},{(1<<20)+1,1,4},{3000,1000,8}};
	for(unsigned s=0;s<sizeof(pw)/sizeof(*pw);s++){
		int n = pw[s][0]*pw[s][1] >= (1<<19) ? 128 : N; size_t f0=fr(); int rc=0;
		for(int i=0;i<n;i++) if((rc=ap(&p[i],&pitch[i],pw[s][0],pw[s][1],(unsigned)pw[s][2]))){printf("rc %d\n",rc);n=i;break;}
		size_t drop=f0-fr();
		printf("pitch w %zu h %zu elem %zu -> pitch %zu (pitch*h %zu)\n",pw[s][0],pw[s][1],pw[s][2],pitch[0],pitch[0]*pw[s][1]);
		strides("  pitch",pw[s][0]*pw[s][1],n,drop);
		for(int i=0;i<n;i++) mfree(p[i]);
	}
	/* managed */
	int (*am)(DP*,size_t,unsigned)=(int(*)(DP*,size_t,unsigned))sym("cuMemAllocManaged");
	size_t ms[]={1,256,257,4096,4097,65536,(1<<20)+1,(2<<20)+1};
	for(unsigned s=0;s<sizeof(ms)/sizeof(*ms);s++){
		int n = ms[s] >= (1<<20) ? 128 : N; size_t f0=fr(); int rc=0;
		for(int i=0;i<n;i++) if((rc=am(&p[i],ms[s],1))){printf("rc %d\n",rc);n=i;break;}
		strides("managed",ms[s],n,f0-fr());
		for(int i=0;i<n;i++) mfree(p[i]);
	}
	/* async from the default pool */
	int (*aa)(DP*,size_t,void*)=(int(*)(DP*,size_t,void*))sym("cuMemAllocAsync");
	int (*fa)(DP,void*)=(int(*)(DP,void*))sym("cuMemFreeAsync");
	int (*ss)(void*)=(int(*)(void*))sym("cuStreamSynchronize");
	size_t as[]={1,256,257,512,513,4096,4097,(1<<20)+1,(2<<20)+1};
	for(unsigned s=0;s<sizeof(as)/sizeof(*as);s++){
		int n = as[s] >= (1<<20) ? 128 : N; size_t f0=fr(); int rc=0;
		for(int i=0;i<n;i++) if((rc=aa(&p[i],as[s],0))){printf("rc %d\n",rc);n=i;break;}
		ss(0);
		strides("  async",as[s],n,f0-fr());
		for(int i=0;i<n;i++) fa(p[i],0);
		ss(0);
	}
	/* VMM: unmap part of a mapping; one unmap over two mappings; address free while mapped */
	NVT_MEM_ALLOC_PROP prop={0}; prop.type=1; prop.location_type=1; prop.location_id=0;
	int (*cr)(uint64_t*,size_t,const void*,unsigned long long)=(int(*)(uint64_t*,size_t,const void*,unsigned long long))sym("cuMemCreate");
	int (*rs)(DP*,size_t,size_t,DP,unsigned long long)=(int(*)(DP*,size_t,size_t,DP,unsigned long long))sym("cuMemAddressReserve");
	int (*mp)(DP,size_t,size_t,uint64_t,unsigned long long)=(int(*)(DP,size_t,size_t,uint64_t,unsigned long long))sym("cuMemMap");
	int (*um)(DP,size_t)=(int(*)(DP,size_t))sym("cuMemUnmap");
	int (*af)(DP,size_t)=(int(*)(DP,size_t))sym("cuMemAddressFree");
	int (*rel)(uint64_t)=(int(*)(uint64_t))sym("cuMemRelease");
	size_t sz=64<<20; uint64_t h1=0,h2=0; DP va=0; size_t f0=fr(); int rc;
	rc=cr(&h1,sz,&prop,0); printf("create1 rc %d\n",rc); rc=cr(&h2,sz,&prop,0); printf("create2 rc %d drop %zu\n",rc,f0-fr());
	rc=rs(&va,3*sz,0,0,0); printf("reserve 3x rc %d\n",rc);
	rc=mp(va,sz,0,h1,0); printf("map h1 at 0 rc %d\n",rc);
	rc=mp(va+sz,sz,0,h2,0); printf("map h2 at 1 rc %d\n",rc);
	rc=mp(va+2*sz,sz,0,h1,0); printf("map h1 again at 2 rc %d\n",rc);
	rc=mp(va+2*sz,sz/2,sz/2,h2,0); printf("map half of h2 (offset half) at 2 rc %d\n",rc);
	rel(h1); rel(h2); printf("released both: drop %zu\n",f0-fr());
	rc=um(va,sz/2); printf("unmap first half of h1 mapping rc %d drop %zu\n",rc,f0-fr());
	rc=um(va+sz/2,sz); printf("unmap straddling h1/h2 mappings rc %d drop %zu\n",rc,f0-fr());
	rc=um(va,2*sz); printf("unmap over both mappings rc %d drop %zu\n",rc,f0-fr());
	rc=af(va,3*sz); printf("address free with h1 still mapped at 2 rc %d drop %zu\n",rc,f0-fr());
	rc=um(va+2*sz,sz); printf("unmap h1 at 2 rc %d drop %zu\n",rc,f0-fr());
	rc=af(va,3*sz); printf("address free rc %d drop %zu\n",rc,f0-fr());
	/* one handle mapped twice, unmap one, release: still held? */
	uint64_t h3=0; DP vb=0; f0=fr();
	cr(&h3,sz,&prop,0); rs(&vb,2*sz,0,0,0); mp(vb,sz,0,h3,0); mp(vb+sz,sz,0,h3,0); rel(h3);
	printf("h3 mapped twice, released: drop %zu\n",f0-fr());
	rc=um(vb,sz); printf("unmap one: rc %d drop %zu\n",rc,f0-fr());
	rc=um(vb+sz,sz); printf("unmap other: rc %d drop %zu\n",rc,f0-fr());
	af(vb,2*sz);
	/* ctx destroy / process exit: mapped memory after primary ctx reset? */
	uint64_t h4=0; DP vc=0; f0=fr();
	cr(&h4,sz,&prop,0); rs(&vc,sz,0,0,0); mp(vc,sz,0,h4,0); rel(h4);
	rc=((int(*)(int))sym("cuDevicePrimaryCtxReset_v2"))(0); printf("primary reset with h4 mapped, released: rc %d drop %zu\n",rc,f0-fr());
	return 0;
}
