/* Does the driver block the enqueuing thread on a barrier gated by an unset user event?
 * Times clEnqueueBarrierWithWaitList + clFlush on an in-order queue while an earlier
 * user-event-gated barrier is pending; another thread sets the user event after 20 ms. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
static cl_event U1; static double t_set;
static void *setter(void *a){(void)a;usleep(20000);t_set=now();clSetUserEventStatus(U1,CL_COMPLETE);return 0;}
int main(void){
  cl_platform_id p; cl_device_id d; cl_int e;
  clGetPlatformIDs(1,&p,NULL); clGetDeviceIDs(p,CL_DEVICE_TYPE_ALL,1,&d,NULL);
  cl_context c=clCreateContext(NULL,1,&d,NULL,NULL,&e);
  cl_command_queue q=clCreateCommandQueue(c,d,CL_QUEUE_PROFILING_ENABLE,&e);
  cl_mem m=clCreateBuffer(c,CL_MEM_READ_WRITE,4096,NULL,&e);
  int x[1024]={0};
  for (int round=0; round<3; round++){
    U1=clCreateUserEvent(c,&e); cl_event U2=clCreateUserEvent(c,&e);
    double t0=now(); cl_event s1,b1,s2,b2,w;
    clEnqueueBarrierWithWaitList(q,0,NULL,&s1);
    clEnqueueBarrierWithWaitList(q,1,&U1,&b1); double t1=now();
    clFlush(q); double t2=now();
    pthread_t th; pthread_create(&th,NULL,setter,NULL);
    clEnqueueBarrierWithWaitList(q,0,NULL,&s2); double t3=now();
    clEnqueueBarrierWithWaitList(q,1,&U2,&b2); double t4=now();
    clFlush(q); double t5=now();
    clEnqueueWriteBuffer(q,m,CL_FALSE,0,4096,x,0,NULL,&w); double t6=now();
    clFlush(q); double t7=now();
    clSetUserEventStatus(U2,CL_COMPLETE);
    pthread_join(th,NULL);
    clFinish(q); double t8=now();
    printf("round %d: barrier(U1) %.3f ms, flush %.3f, barrier %.3f, barrier(U2) %.3f, flush %.3f, write %.3f, flush %.3f (U1 set at %.3f), finish at %.3f\n",
      round,t1-t0,t2-t1,t3-t2,t4-t3,t5-t4,t6-t5,t7-t6,t_set-t0,t8-t0);
    /* latency: user event set -> dependent barrier complete */
    cl_event U3=clCreateUserEvent(c,&e), b3;
    clEnqueueBarrierWithWaitList(q,1,&U3,&b3); clFlush(q); usleep(1000);
    double a=now(); clSetUserEventStatus(U3,CL_COMPLETE); clWaitForEvents(1,&b3); double b=now();
    cl_int st; int polls=0; cl_event U4=clCreateUserEvent(c,&e), b4;
    clEnqueueBarrierWithWaitList(q,1,&U4,&b4); clFlush(q); usleep(1000);
    double a2=now(); clSetUserEventStatus(U4,CL_COMPLETE);
    do { clGetEventInfo(b4,CL_EVENT_COMMAND_EXECUTION_STATUS,sizeof st,&st,NULL); polls++; } while (st!=CL_COMPLETE);
    double b2_=now();
    printf("  set user event -> barrier complete: %.3f ms (clWaitForEvents), %.3f ms (%d polls)\n",b-a,b2_-a2,polls);
  }
  return 0;
}
