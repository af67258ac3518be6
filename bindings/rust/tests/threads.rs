//! Send + Sync: handles shared and moved between threads.

mod common;

use std::sync::Arc;
use std::thread;

use common::iota;
use stridemem::{DType, Device, Stack, Tensor};

#[test]
fn handles_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Tensor>();
    assert_send_sync::<stridemem::Storage>();
    assert_send_sync::<Stack>();
    assert_send_sync::<stridemem::Error>();
}

#[test]
fn threads_write_disjoint_rows_of_one_storage() {
    let rows = 8i64;
    let cols = 1000i64;
    let t = Tensor::zeros(&[rows, cols], DType::F64, Device::Cpu).unwrap();
    let workers: Vec<_> = (0..rows)
        .map(|r| {
            let mut row = t.select(0, r).unwrap(); // moved into the thread
            thread::spawn(move || {
                for _ in 0..10 {
                    row.add_scalar(r as f64).unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let v = t.to_vec::<f64>().unwrap();
    for r in 0..rows as usize {
        assert!(v[r * cols as usize..][..cols as usize].iter().all(|&x| x == 10.0 * r as f64));
    }
}

#[test]
fn clones_and_drops_race_safely() {
    let (t, data) = iota(&[64]);
    let shared = Arc::new(t);
    let workers: Vec<_> = (0..4)
        .map(|k| {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                for i in 0..2000 {
                    let c = shared.clone(); // retain
                    let v = c.narrow(0, (i + k) % 60, 4).unwrap();
                    assert_eq!(v.shape(), &[4]);
                    drop(c); // release, concurrently with the others
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(shared.to_vec::<f32>().unwrap(), data);
}

#[test]
fn a_stack_shared_by_threads_hands_out_disjoint_regions() {
    let stack = Arc::new(Stack::new(Device::Cpu, 64 * 1024).unwrap());
    let workers: Vec<_> = (0..4)
        .map(|k| {
            let stack = Arc::clone(&stack);
            thread::spawn(move || {
                (0..8)
                    .map(|_| {
                        let mut t = stack.push(&[64], DType::I32).unwrap();
                        t.fill(k as f64).unwrap();
                        t
                    })
                    .collect::<Vec<Tensor>>()
            })
        })
        .collect();
    let all: Vec<(usize, Tensor)> = workers
        .into_iter()
        .enumerate()
        .flat_map(|(k, w)| w.join().unwrap().into_iter().map(move |t| (k, t)))
        .collect();
    let mut starts: Vec<usize> = all.iter().map(|(_, t)| t.data_ptr().unwrap() as usize).collect();
    starts.sort();
    for pair in starts.windows(2) {
        assert!(pair[1] - pair[0] >= 256, "regions overlap");
    }
    for (k, t) in &all {
        assert_eq!(t.to_vec::<i32>().unwrap(), vec![*k as i32; 64]);
    }
    assert_eq!(stack.used().unwrap().0, 32 * 256);
}
