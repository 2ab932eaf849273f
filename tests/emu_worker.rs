//! Background emulation worker: never blocks the caller, reuses results per key.
mod common;
use common::fe;
use std::sync::{mpsc, Arc};
use OpenCL::emu::worker::*;
use OpenCL::emu::*;

#[test]
fn worker_runs_reuses_and_never_blocks() {
    let m = Arc::new(
        load_module(
            &compile_source(
                "kernel void k(global int* o) { o[get_global_id(0)] = 7; }",
                "",
                &fe(),
            )
            .unwrap(),
        )
        .unwrap(),
    );
    let mut w = EmuWorker::start(1).unwrap();
    let key = EmuKey {
        program: "p1".into(),
        kernel: "k".into(),
        shape: LaunchShape::new(&[64], &[32], None),
        group: [0; 3],
    };
    assert!(w.lookup(&key).is_none());
    let job =
        |key: &EmuKey, tx: mpsc::Sender<EmuOutcome>, gate: Option<mpsc::Receiver<()>>| EmuJob {
            key: key.clone(),
            module: m.clone(),
            args: vec![ArgValue::Buffer(vec![0; 256])],
            cfg: EmuConfig::default(),
            done: Box::new(move |o| {
                if let Some(g) = gate {
                    let _ = g.recv();
                }
                let _ = tx.send(o);
            }),
        };
    // First job: its callback holds the worker until the gate opens.
    let (tx1, rx1) = mpsc::channel();
    let (gate_tx, gate_rx) = mpsc::channel();
    assert!(w.submit(job(&key, tx1, Some(gate_rx))).is_ok());
    // Wait until the worker has taken job 1 (the queue is then empty): its result is cached.
    while w.lookup(&key).is_none() {
        std::thread::yield_now();
    }
    let (tx2, rx2) = mpsc::channel();
    assert!(
        w.submit(job(&key, tx2, None)).is_ok(),
        "queue has room for one"
    );
    let (tx3, _rx3) = mpsc::channel();
    assert!(
        w.submit(job(&key, tx3, None)).is_err(),
        "full queue refuses instead of blocking"
    );
    gate_tx.send(()).unwrap();
    let o1 = rx1.recv().unwrap();
    assert!(!o1.reused);
    let st = o1.result.unwrap();
    assert_eq!(st.global_stores.requests, 1);
    let o2 = rx2.recv().unwrap();
    assert!(o2.reused);
    assert_eq!(o2.result.unwrap(), st);
    w.shutdown();
    let (tx4, _rx4) = mpsc::channel();
    assert!(w.submit(job(&key, tx4, None)).is_err());
}
