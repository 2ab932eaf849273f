//! `clprism accuracy` (work in progress).

/// Entry point of `clprism accuracy`.
pub fn accuracy_main(_args: &[String]) -> i32 {
    eprintln!("clprism accuracy: not yet implemented");
    1
}
