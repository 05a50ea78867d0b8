//! The tool catalog: the registry of tools a session can offer, the selection it offers, the
//! schemas a model sees, and the executor that runs calls (`tackle tools`).

pub use tackle_core::Executor;
pub use tackle_core::registry::{ALL_TOOLSET, Registry, RegistryEntry, Selection};
pub use tackle_core::schema::render_tools;
pub use tackle_core::spec::Availability;
pub use tackle_core::text::json_error;
pub use tackle_tools::Skills;
pub use tackle_tools::planning::load_skill::NAME as LOAD_SKILL;
pub use tackle_tools::planning::skills::Skill;
