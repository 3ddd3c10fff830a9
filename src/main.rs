//! The `ingestbench` binary: hands the command line to the library and exits with the code it
//! chooses. No logic lives here.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    std::process::exit(ingestbench::cli::run(&args));
}
