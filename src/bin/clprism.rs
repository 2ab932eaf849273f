//! The `clprism` command: a dispatcher on the first argument. Each subcommand is a
//! `OpenCL::<module>::<name>_main(&args_after_the_subcommand) -> i32` function.

const USAGE: &str = "\
usage: clprism <command> [ARGS...]

commands:
  run [OPTIONS] -- APP ARGS...   run APP with the interposer (see `clprism run --help`)
  report LOG.jsonl [B.jsonl]     per-kernel report of a log, or a comparison of two logs
                                 (see `clprism report --help`)
  emulate FILE.cl --kernel NAME --global X[,Y[,Z]] --local X[,Y[,Z]] [...]
                                 emulate one work-group, print its statistics JSON
                                 (see `clprism emulate --help`)
  simulate [OPTIONS]             discrete-event simulation of the chunk schedulers
                                 (see `clprism simulate --help`)
  characterize [--device P:D] [--out FILE] [--quick]
                                 microbenchmarks -> device profile JSON
                                 (see `clprism characterize --help`)
  accuracy [--examples DIR] [--profiles DIR] [--out DIR]
                                 run the examples on every device, compare measured
                                 kernel times with the projections (Panwar §V)
                                 (see `clprism accuracy --help`)
  trace-check TRACE.json...      check Chrome trace files (CLPRISM_TRACE) against the
                                 trace event format; print what they contain
";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rest = args.get(2..).unwrap_or(&[]);
    let code = match args.get(1).map(String::as_str) {
        Some("run") => OpenCL::launcher::run_main(rest),
        Some("report") => OpenCL::report::report_main(rest),
        Some("emulate") => {
            let cfg = OpenCL::config::get();
            let fe = OpenCL::emu::FrontendOptions::from_config(cfg, |k| std::env::var_os(k));
            OpenCL::emu::cli::emulate_main(rest, &fe, cfg.profiles.clone())
        }
        Some("simulate") => OpenCL::sched::sim::simulate_main(rest),
        Some("characterize") => OpenCL::characterize::characterize_main(rest),
        Some("accuracy") => OpenCL::accuracy::accuracy_main(rest),
        Some("trace-check") => OpenCL::log::trace::check::check_main(rest),
        Some("-h") | Some("--help") | Some("help") => {
            print!("{USAGE}");
            0
        }
        Some(other) => {
            eprint!("clprism: unknown command '{other}'\n{USAGE}");
            2
        }
        None => {
            eprint!("{USAGE}");
            2
        }
    };
    std::process::exit(code);
}
