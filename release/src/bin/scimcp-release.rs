fn main() -> std::process::ExitCode {
    scimcp_release::main()
}
