#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <pthread.h>
#include <unistd.h>
cl_event U;
void *setter(void *x){ sleep(1); printf("setting U\n"); fflush(stdout); clSetUserEventStatus(U, CL_COMPLETE); return 0; }
int main(){ cl_platform_id p; cl_device_id d[3]; cl_uint nd; cl_int e; clGetPlatformIDs(1,&p,0); clGetDeviceIDs(p,CL_DEVICE_TYPE_ALL,3,d,&nd);
 cl_context c=clCreateContext(0,1,&d[0],0,0,&e); cl_command_queue q=clCreateCommandQueue(c,d[0],0,&e);
 cl_mem b=clCreateBuffer(c,0,64,0,&e); int h[16]={0};
 U=clCreateUserEvent(c,&e); cl_event E; e=clEnqueueBarrierWithWaitList(q,1,&U,&E); printf("barrier %d\n",e);
 pthread_t t; pthread_create(&t,0,setter,0);
 e=clEnqueueReadBuffer(q,b,CL_TRUE,0,64,h,0,0,0); printf("read returned %d\n",e);
 pthread_join(t,0); return 0; }
