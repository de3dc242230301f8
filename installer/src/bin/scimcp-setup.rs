fn main() -> std::process::ExitCode {
    scimcp_installer::main()
}
