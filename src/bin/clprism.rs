//! `clprism` command-line tool.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let code = match args.get(1).map(|s| s.as_str()) {
        Some("emulate") => OpenCL::emu::cli::emulate_main(&args[2..]),
        _ => {
            eprintln!(
                "usage: clprism emulate FILE.cl --kernel NAME --global X --local X [--arg ...]"
            );
            2
        }
    };
    std::process::exit(code);
}
