fn main() -> std::process::ExitCode {
    scimcp_parity::main()
}
