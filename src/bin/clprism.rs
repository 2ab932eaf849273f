fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("simulate") => std::process::exit(OpenCL::sched::sim::simulate_main(&args[1..])),
        _ => {
            eprintln!("usage: clprism simulate --help");
            std::process::exit(2);
        }
    }
}
