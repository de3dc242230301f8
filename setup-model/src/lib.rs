//! What an installation of scimcp is and where it lives, shared by the installer
//! (`scimcp-setup`, which writes it) and the doctor (`scimcp-doctor`, which reads it): the
//! host and the data root's [`layout`], the active version ([`current`]), the MCP clients,
//! where their configs are and how an entry is read, planned and written in them
//! ([`clients`], [`edit`], [`register`]), their backups ([`backup`]), the remote servers
//! ([`remote_server`]), a runtime's installed files ([`runtime_files`]) and the adapter
//! arguments ([`adapters`]).
//!
//! It must stay below both: no downloads, no bundle unpacking or signature checks, no
//! runtime provisioning and no terminal progress (those are the installer's, with
//! `self_update` and `indicatif`), so the doctor can depend on it without them. It never
//! writes a client's file except through [`register::apply`], which only the installer calls.

pub mod adapters;
pub mod backup;
pub mod clients;
pub mod current;
pub mod edit;
pub mod entry;
pub mod faults;
pub mod host;
pub mod layout;
pub mod register;
pub mod remote_server;
pub mod runtime_files;
pub mod steps;
