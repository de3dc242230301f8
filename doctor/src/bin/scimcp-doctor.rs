fn main() -> std::process::ExitCode {
    scimcp_doctor::main()
}
