// Session 27 (issue 32 item 3), NOT RUN: what the ~380 ns per iteration of PolyBench-ACC's
// accumulating column walks are (correlation/covariance mean_kernel, std_kernel, atax/mvt/
// bicg/gemver kernel 2: one DRAM load of a new 16-32 KB-strided row per iteration and a store
// of the accumulator, 1.55-1.57 ms for 4096 rows on both the H100 and the H200, where the
// profiles' pointer chase is 215 / 184 ns). Each kernel times one walk of R rows by W
// work-items in blocks of 256 (W/256 blocks, the few-warps regime of those kernels).
// Build and run on one GPU: nvcc -O3 -arch=sm_90 -o cs chain-stores.cu && ./cs
//   c0: PolyBench's mean_kernel (m[j] += d[i*M+j], store every row)
//   c1: the same walk, the sum in a register, each row's address made dependent on the
//       previous load (zero is a runtime 0): a pure DRAM latency chain, no store
//   c2: c1 plus a store of the running sum to m[j] every row (the store without the alias)
//   c3: c0 with one block of one warp (no other warps: unloaded)
//   c4: c1 with rows 128 bytes apart (consecutive lines: a streaming chain)
//   r0: PolyBench's atax kernel 1 (row walk, t[i] += A[i*M+j]*x[j]), blocks of 32
//   r1: the same, blocks of 256 (8 warps per SM)
// ns per row = time / R tells whether the store adds a round trip (c0 - c1 ~ c2 - c1) or the
// strided first touch itself is ~380 ns under load (c1 ~ c0).
#include <cstdio>
#define M 4096
#define R 4096
__global__ void c0(const float*d,float*m){int j=blockIdx.x*blockDim.x+threadIdx.x;m[j]=0;for(int i=0;i<R;i++)m[j]+=d[i*M+j];}
__global__ void c1(const float*d,float*m,int zero){int j=blockIdx.x*blockDim.x+threadIdx.x;float s=0;int o=0;
 for(int i=0;i<R;i++){float v=d[i*M+j+o];s+=v;o=__float_as_int(v)&zero;}m[j]=s;}
__global__ void c2(const float*d,float*m,int zero){int j=blockIdx.x*blockDim.x+threadIdx.x;float s=0;int o=0;
 for(int i=0;i<R;i++){float v=d[i*M+j+o];s+=v;m[j]=s;o=__float_as_int(v)&zero;}}
__global__ void c4(const float*d,float*m,int zero){int j=blockIdx.x*blockDim.x+threadIdx.x;float s=0;int o=0;
 for(int i=0;i<R;i++){float v=d[i*32+j+o];s+=v;o=__float_as_int(v)&zero;}m[j]=s;}
__global__ void r0(const float*a,const float*x,float*t){int i=blockIdx.x*blockDim.x+threadIdx.x;for(int j=0;j<M;j++)t[i]+=a[i*M+j]*x[j];}
int main(){float*d,*m,*x;size_t z=sizeof(float)*(size_t)M*R;cudaMalloc(&d,z);cudaMalloc(&m,M*4);cudaMalloc(&x,M*4);
 cudaMemset(d,0,z);cudaMemset(x,0,M*4);cudaEvent_t e0,e1;cudaEventCreate(&e0);cudaEventCreate(&e1);float ms,best;
#define T(name,launch) best=1e9;for(int r=0;r<8;r++){cudaEventRecord(e0);launch;cudaEventRecord(e1);cudaEventSynchronize(e1);\
 cudaEventElapsedTime(&ms,e0,e1);if(r&&ms<best)best=ms;}printf("%-34s %9.1f us %7.1f ns/row\n",name,best*1e3,best*1e6/R);
 T("c0 mean_kernel (store every row)",(c0<<<M/256,256>>>(d,m)))
 T("c1 dependent chain, no store",(c1<<<M/256,256>>>(d,m,0)))
 T("c2 dependent chain + store",(c2<<<M/256,256>>>(d,m,0)))
 T("c3 mean_kernel, one warp",(c0<<<1,32>>>(d,m)))
 T("c4 dependent chain, 128 B stride",(c4<<<M/256,256>>>(d,m,0)))
 T("r0 atax kernel 1, blocks of 32",(r0<<<M/32,32>>>(d,x,m)))
 T("r1 atax kernel 1, blocks of 256",(r0<<<M/256,256>>>(d,x,m)))
 printf("%s\n",cudaGetErrorString(cudaGetLastError()));}
