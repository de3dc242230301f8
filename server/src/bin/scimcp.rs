fn main() -> std::process::ExitCode {
    scimcp_server::main()
}
