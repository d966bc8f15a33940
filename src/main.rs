fn main() {
    std::process::exit(leakhound::cli::main());
}
