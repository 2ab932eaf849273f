// Session 26 (issue 32) part 2: what bounds PolyBench gemm's per-iteration store
#include <cstdio>
#define N 1024
#define IJ int j=blockIdx.x*32+threadIdx.x,i=blockIdx.y*8+threadIdx.y;
extern __shared__ float sh[];
__global__ void k0(float*a,float*b,float*c,float al,float be){IJ
 c[i*N+j]*=be;for(int k=0;k<N;k++)c[i*N+j]+=al*a[i*N+k]*b[k*N+j];}
__global__ void k5(float*a,float*b,float*c,float al,float be){IJ
 float s=c[i*N+j]*be;c[i*N+j]=s;float x=a[i*N],y=b[j];for(int k=0;k<N;k++){float x1=a[i*N+(k+1)%N],y1=b[((k+1)%N)*N+j];
 s+=al*x*y;asm volatile("st.global.f32 [%0], %1;"::"l"(c+i*N+j),"f"(s):"memory");x=x1;y=y1;}}
__global__ void k8(float*a,float*b,float*c,float al,float be){IJ
 float s=be;for(int k=0;k<N;k++){s+=al;asm volatile("st.global.f32 [%0], %1;"::"l"(c+i*N+j),"f"(s):"memory");}}
__global__ void k9(float*a,float*b,float*c,float al,float be){IJ
 float s=be;for(int k=0;k<N;k++){s+=al;asm volatile("st.global.f32 [%0], %1;"::"l"(c+((i*N+j+k*32768)&(N*N-1))),"f"(s):"memory");}}
typedef void(*K)(float*,float*,float*,float,float);
int main(){float*a,*b,*c;size_t z=sizeof(float)*N*N;cudaMalloc(&a,z);cudaMalloc(&b,z);cudaMalloc(&c,z);
 cudaMemset(a,0,z);cudaMemset(b,0,z);cudaMemset(c,0,z);
 K ks[]={k0,k0,k0,k5,k8,k9};int shm[]={0,100000,200000,0,0,0};const char*nm[]={"k0 polybench","k0, 2 WGs/SM","k0, 1 WG/SM","k5 k0 loads ahead of store","k8 stores only, same line","k9 stores only, new lines"};
 cudaFuncSetAttribute(k0,cudaFuncAttributeMaxDynamicSharedMemorySize,200000);
 dim3 g(N/32,N/8),l(32,8);cudaEvent_t e0,e1;cudaEventCreate(&e0);cudaEventCreate(&e1);
 for(int v=0;v<6;v++){ks[v]<<<g,l,shm[v]>>>(a,b,c,1.5f,1.2f);float best=1e9;
  for(int r=0;r<7;r++){cudaEventRecord(e0);ks[v]<<<g,l,shm[v]>>>(a,b,c,1.5f,1.2f);cudaEventRecord(e1);cudaEventSynchronize(e1);float ms;cudaEventElapsedTime(&ms,e0,e1);if(ms<best)best=ms;}
  printf("%-28s min %8.1f us\n",nm[v],best*1e3);}
 printf("%s\n",cudaGetErrorString(cudaGetLastError()));}
