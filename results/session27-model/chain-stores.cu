// Session 27 (issue 32 item 3): what the ~380 ns per row of PolyBench-ACC's accumulating
// column walks are (correlation/covariance mean_kernel: m[j] += d[i*M+j], one DRAM load of a
// new 16 KB-strided row and a store of the accumulator per row; 1.55-1.57 ms for 4096 rows
// on the H100 and the H200, whose pointer chases are 215 / 184 ns). 4096 work-items in
// blocks of 256 (16 blocks: the few-warps regime of those kernels) unless said otherwise;
// ns per row = best of 7 timed runs / rows. nvcc -O3 -arch=sm_90 -o cs chain-stores.cu && ./cs
//   c0 PolyBench's mean_kernel               c1 the walk as a dependent chain, no store
//   c2 c1 + a store of the sum every row     c3 c0 with one warp
//   c4 c1 with rows 128 B apart (streaming)  c6 dependent chain of L2 hits (__ldcg, 1 MiB)
//   c7 c6 + a store every row                r0/r1 atax kernel 1 (row walk), blocks of 32/256
#include <cstdio>
#define M 4096
#define R 4096
__global__ void c0(const float*d,float*m){int j=blockIdx.x*blockDim.x+threadIdx.x;m[j]=0;for(int i=0;i<R;i++)m[j]+=d[i*M+j];}
__global__ void c1(const float*d,float*m,int z){int j=blockIdx.x*blockDim.x+threadIdx.x;float s=0;int o=0;
 for(int i=0;i<R;i++){float v=d[i*M+j+o];s+=v;o=__float_as_int(v)&z;}m[j]=s;}
__global__ void c2(const float*d,float*m,int z){int j=blockIdx.x*blockDim.x+threadIdx.x;float s=0;int o=0;
 for(int i=0;i<R;i++){float v=d[i*M+j+o];s+=v;m[j]=s;o=__float_as_int(v)&z;}}
__global__ void c4(const float*d,float*m,int z){int j=blockIdx.x*blockDim.x+threadIdx.x;float s=0;int o=0;
 for(int i=0;i<R;i++){float v=d[i*32+j+o];s+=v;o=__float_as_int(v)&z;}m[j]=s;}
__global__ void c6(const float*d,float*m,int z){int j=blockIdx.x*blockDim.x+threadIdx.x;float s=0;int o=0;
 for(int i=0;i<R;i++){float v=__ldcg(d+(i&63)*M+j+o);s+=v;o=__float_as_int(v)&z;}m[j]=s;}
__global__ void c7(const float*d,float*m,int z){int j=blockIdx.x*blockDim.x+threadIdx.x;float s=0;int o=0;
 for(int i=0;i<R;i++){float v=__ldcg(d+(i&63)*M+j+o);s+=v;m[j]=s;o=__float_as_int(v)&z;}}
__global__ void r0(const float*a,const float*x,float*t){int i=blockIdx.x*blockDim.x+threadIdx.x;for(int j=0;j<M;j++)t[i]+=a[i*M+j]*x[j];}
int main(){float*d,*m,*x;size_t n=(size_t)M*R*4;cudaMalloc(&d,n);cudaMalloc(&m,M*4);cudaMalloc(&x,M*4);
 cudaMemset(d,0,n);cudaMemset(x,0,M*4);cudaEvent_t a,b;cudaEventCreate(&a);cudaEventCreate(&b);float ms,t;
#define T(s,L) t=1e9;for(int r=0;r<8;r++){cudaEventRecord(a);L;cudaEventRecord(b);cudaEventSynchronize(b);\
 cudaEventElapsedTime(&ms,a,b);if(r&&ms<t)t=ms;}printf("%-3s %9.1f us %7.1f ns/row\n",s,t*1e3,t*1e6/R);
 T("c0",(c0<<<16,256>>>(d,m)))T("c1",(c1<<<16,256>>>(d,m,0)))T("c2",(c2<<<16,256>>>(d,m,0)))
 T("c3",(c0<<<1,32>>>(d,m)))T("c4",(c4<<<16,256>>>(d,m,0)))T("c6",(c6<<<16,256>>>(d,m,0)))
 T("c7",(c7<<<16,256>>>(d,m,0)))T("r0",(r0<<<128,32>>>(d,x,m)))T("r1",(r0<<<16,256>>>(d,x,m)))
 printf("%s\n",cudaGetErrorString(cudaGetLastError()));}
