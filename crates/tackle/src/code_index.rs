//! The code knowledge graph: the index of a source tree's definitions and references and the
//! questions `tackle ckg` and the `ckg` tool ask it (docs/ckg.md).

pub use tackle_ckg::answer::{Answer, definitions, outline, references, repo_map, search};
pub use tackle_ckg::{Category, CkgError, Definition, Index, IndexOptions, Language, RefreshReport, Stats, Within};
