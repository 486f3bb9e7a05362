import ctypes as C,threading,time,os
L=C.CDLL("libcuda.so.1");V=C.c_void_p;U=C.c_uint64
def k(r):
 assert r==0,r
P=b""".version 7.0
.target sm_70
.address_size 64
.visible .entry spin(.param .u64 o,.param .u64 n){
.reg .pred %p;.reg .b64 %d<6>;
ld.param.u64 %d1,[o];ld.param.u64 %d2,[n];cvta.to.global.u64 %d1,%d1;
mov.u64 %d3,%globaltimer;
L:mov.u64 %d4,%globaltimer;sub.u64 %d5,%d4,%d3;setp.lt.u64 %p,%d5,%d2;@%p bra L;
atom.global.max.u64 %d5,[%d1],%d3;atom.global.max.u64 %d5,[%d1+8],%d4;ret;}
"""
k(L.cuInit(0));d=C.c_int();k(L.cuDeviceGet(C.byref(d),0));x=V()
k(L.cuCtxCreate_v2(C.byref(x),0,d));m=V();k(L.cuModuleLoadData(C.byref(m),P+b"\0"))
f=V();k(L.cuModuleGetFunction(C.byref(f),m,b"spin"))
a=V();b=V();k(L.cuStreamCreate(C.byref(a),0));k(L.cuStreamCreate(C.byref(b),1))
buf=U();k(L.cuMemAlloc_v2(C.byref(buf),64))
def go(s,off,ns,blocks,thr):
 o=U(buf.value+off);n=U(ns);ar=(V*2)(C.cast(C.byref(o),V),C.cast(C.byref(n),V))
 k(L.cuLaunchKernel(f,blocks,1,1,thr,1,1,0,s,ar,None))
for blocks in (1,264,2000):
 k(L.cuMemsetD8_v2(buf,0,64));k(L.cuCtxSynchronize())
 def th():
  L.cuCtxSetCurrent(x);t=time.monotonic()+30e-6
  while time.monotonic()<t:pass
  go(b,16,5000000,1,1)
 go(a,0,12000000,blocks,128);T=threading.Thread(target=th);t0=time.monotonic();T.start()
 k(L.cuCtxSynchronize());t1=time.monotonic();T.join();k(L.cuCtxSynchronize())
 h=(U*4)();k(L.cuMemcpyDtoH_v2(h,buf,32));A0,A1,B0,B1=list(h)
 print("blocks",blocks,"wait_ms %.2f"%((t1-t0)*1e3),"A_ms %.2f"%((A1-A0)/1e6),"B_start-A_start_ms %.2f"%((B0-A0)/1e6),"B_end-A_end_ms %.2f"%((B1-A1)/1e6))
