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
  schema --markdown | --check LOG.jsonl...
                                 print the log schema table (docs/log-schema.md), or
                                 check log records against the typed schema
  cache stats|trim|clear         the cache directory: size against CLPRISM_CACHE_MAX,
                                 trim it to the bound, or empty it
  controls [--markdown]          list the CLPRISM_* environment variables (--markdown:
                                 the text of docs/controls.md)

`clprism COMMAND --help` describes each command; docs/usage.md has them all.
";

const CONTROLS_USAGE: &str = "\
usage: clprism controls [--markdown]

Lists every CLPRISM_* environment variable: its values, default, who reads it and what it
does, from the table in src/config/controls.rs. With --markdown, prints docs/controls.md
(regenerate it with `clprism controls --markdown > docs/controls.md`).
";

/// `clprism controls [--markdown]`.
fn controls_main(args: &[String]) -> i32 {
    use OpenCL::config::{controls, Reader};
    match args.first().map(String::as_str) {
        None => {
            for (title, r) in [
                (
                    "read by the interposer in the app's process",
                    Reader::Library,
                ),
                ("read by the clprism command", Reader::Command),
                ("read by the example apps", Reader::Examples),
                ("read by the tests", Reader::Tests),
            ] {
                println!("{title}:\n{}", controls::usage_lines(r));
            }
            0
        }
        Some("--markdown") if args.len() == 1 => {
            print!("{}", controls::markdown());
            0
        }
        Some("-h") | Some("--help") => {
            print!("{CONTROLS_USAGE}");
            0
        }
        Some(_) => {
            eprint!("clprism controls: unexpected argument\n{CONTROLS_USAGE}");
            2
        }
    }
}

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
        Some("schema") => OpenCL::log::schema::schema_main(rest),
        Some("controls") => controls_main(rest),
        Some("cache") => OpenCL::cache::cli::cache_main(rest),
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
