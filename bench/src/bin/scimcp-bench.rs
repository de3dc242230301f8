fn main() -> std::process::ExitCode {
    scimcp_bench::main()
}
