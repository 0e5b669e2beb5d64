//! The app, driven headless through egui_kittest.
#![cfg(feature = "gui")]

mod app;
mod headers;
mod lab;
mod perbone;
mod pipelines;
mod ux;
mod mesh;
mod progress;
