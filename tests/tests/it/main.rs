//! The end-to-end tests across the built binaries, one binary: the MCP server over stdio
//! and HTTP, hostile clients, workflows, GeochemistryPi, Slurm, and the crate graph.
//!
//! Each module was once its own test binary; one binary links once, and nextest still runs
//! every test in its own process (filter a group with `-E 'test(/^module::/)'`).

mod adapter_check;
mod campaign_restart;
mod confirm;
mod crate_edges;
mod cwl_community;
mod cwl_engine;
mod file_kinds;
mod file_loops;
mod forecasting;
mod geochemistrypi;
mod hardening;
mod hostile;
mod http_hostile;
mod http_load;
mod http_remote;
mod http_transport;
mod human_output;
mod mcp_server;
mod named_inputs;
mod outputs;
mod programs;
mod prune;
mod release_bundle;
mod remote_registration;
mod resources;
mod result_images;
mod run_index;
mod sandbox;
mod sandbox_real_cli;
mod science_clis;
mod slurm;
mod slurm_campaigns;
mod tasks;
mod tasks_2025;
mod third_sweep;
mod tools_list;
mod workflows;
