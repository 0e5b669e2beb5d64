//! The app, driven headless through egui_kittest.
#![cfg(feature = "gui")]

mod app;
mod below_precision;
mod failed;
mod first_start;
mod headers;
mod lab;
mod looks;
mod mesh;
mod perbone;
mod pipelines;
mod progress;
mod tour;
mod truth;
mod ux;
