// Session 26 (issue 32): PolyBench-ACC gemm (LARGE, 1024^3, work-group 32x8) and variants
#include <cstdio>
#define N 1024
__global__ void k0(float*a,float*b,float*c,float al,float be){int j=blockIdx.x*32+threadIdx.x,i=blockIdx.y*8+threadIdx.y;
 c[i*N+j]*=be;for(int k=0;k<N;k++)c[i*N+j]+=al*a[i*N+k]*b[k*N+j];}
__global__ void k1(float*a,float*b,float*c,float al,float be){int j=blockIdx.x*32+threadIdx.x,i=blockIdx.y*8+threadIdx.y;
 float s=c[i*N+j]*be;for(int k=0;k<N;k++)s+=al*a[i*N+k]*b[k*N+j];c[i*N+j]=s;}
__global__ void k2(float*a,float*b,float*c,float al,float be){int j=blockIdx.x*32+threadIdx.x,i=blockIdx.y*8+threadIdx.y;
 c[i*N+j]*=be;for(int k=0;k<N;k++)c[i*N+j]+=al*__ldcg(a+i*N+k)*__ldcg(b+k*N+j);}
__global__ void k3(float*a,float*b,float*c,float al,float be){int j=blockIdx.x*32+threadIdx.x,i=blockIdx.y*8+threadIdx.y;
 float s=c[i*N+j]*be;for(int k=0;k<N;k++){s+=al*__ldcg(a+i*N+k)*__ldcg(b+k*N+j);asm volatile("":"+f"(s));}c[i*N+j]=s;}
__global__ void k4(float*a,float*b,float*c,float al,float be){int j=blockIdx.x*32+threadIdx.x,i=blockIdx.y*8+threadIdx.y;
 float s=c[i*N+j]*be;for(int k=0;k<N;k++){s+=al*a[i*N+k]*b[k*N+j];asm volatile("":"+f"(s));}c[i*N+j]=s;}
typedef void(*K)(float*,float*,float*,float,float);
int main(int argc,char**argv){float*a,*b,*c;size_t z=sizeof(float)*N*N;cudaMalloc(&a,z);cudaMalloc(&b,z);cudaMalloc(&c,z);
 cudaMemset(a,0,z);cudaMemset(b,0,z);cudaMemset(c,0,z);int reps=argc>1?atoi(argv[1]):7;
 K ks[]={k0,k1,k2,k3,k4};const char*nm[]={"k0 polybench (store per k)","k1 register sum","k2 k0 + ldcg (L2 only)","k3 k1 + ldcg, serial","k4 k1 serial"};
 dim3 g(N/32,N/8),l(32,8);cudaEvent_t e0,e1;cudaEventCreate(&e0);cudaEventCreate(&e1);
 for(int v=0;v<5;v++){ks[v]<<<g,l>>>(a,b,c,1.5f,1.2f);float best=1e9,sum=0;
  for(int r=0;r<reps;r++){cudaEventRecord(e0);ks[v]<<<g,l>>>(a,b,c,1.5f,1.2f);cudaEventRecord(e1);cudaEventSynchronize(e1);float ms;cudaEventElapsedTime(&ms,e0,e1);sum+=ms;if(ms<best)best=ms;}
  printf("%-28s min %8.1f us mean %8.1f us\n",nm[v],best*1e3,sum/reps*1e3);}
 printf("%s\n",cudaGetErrorString(cudaGetLastError()));}
