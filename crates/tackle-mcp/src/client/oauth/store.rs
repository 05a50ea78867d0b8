//! Where the tokens of `tackle mcp login` live (docs/mcp.md#remote-servers-and-sign-in): one
//! file per server URL in `mcp-oauth/` of the resolved user config directory, mode 0600 in a
//! 0700 directory, written whole to a temporary file and renamed over the old one, never
//! opened through a link, and never inside the workspace (a workspace's files are the
//! attacker's to read and to plant). The file records the URL it belongs to, so a token is
//! only ever handed to the server it was issued for.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

/// The directory of token files inside the user config directory.
pub const TOKEN_DIR: &str = "mcp-oauth";

/// The tokens of one server URL.
#[derive(Debug, Clone)]
pub struct TokenStore {
    file: PathBuf,
    url: String,
}

/// A token file as written.
#[derive(Serialize, Deserialize)]
struct TokenFile {
    /// The server URL the tokens were issued for.
    server_url: String,
    credentials: StoredCredentials,
}

/// Why a token file could not be kept, read or removed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The token directory resolved inside the workspace.
    #[error(
        "the token directory {} is inside the workspace; tokens are never stored there (set TACKLE_CONFIG_DIR to a directory outside it)",
        .0.display()
    )]
    InsideWorkspace(PathBuf),
    #[error("no user config directory to keep tokens in (set TACKLE_CONFIG_DIR)")]
    NoConfigDir,
    #[error("cannot read {}: {source}", file.display())]
    Read { file: PathBuf, source: std::io::Error },
    /// The token file's directory is missing or not a directory.
    #[error("{} is not a directory", .0.display())]
    NoDirectory(PathBuf),
    #[error("cannot create {}: {source}", dir.display())]
    CreateDirectory { dir: PathBuf, source: std::io::Error },
    #[error("cannot encode the tokens: {0}")]
    Encode(#[source] serde_json::Error),
    #[error("cannot write {}: {source}", file.display())]
    Write { file: PathBuf, source: std::io::Error },
    #[error("cannot remove {}: {source}", file.display())]
    Remove { file: PathBuf, source: std::io::Error },
}

impl TokenStore {
    /// The store of `url` in `dir` (the token directory). Refused when `dir` lies inside
    /// `workspace`.
    pub fn new(dir: &Path, url: &str, workspace: &Path) -> Result<TokenStore, StoreError> {
        let resolved = resolve_existing(dir);
        let workspace = workspace.canonicalize().unwrap_or_else(|_| workspace.to_path_buf());
        if resolved.starts_with(&workspace) {
            return Err(StoreError::InsideWorkspace(dir.to_path_buf()));
        }
        let digest = sha2::Sha256::digest(url.as_bytes());
        let name: String = digest.iter().take(16).map(|byte| format!("{byte:02x}")).collect();
        Ok(TokenStore { file: dir.join(format!("{name}.json")), url: url.to_owned() })
    }

    /// The store of `url` in the user's token directory.
    pub fn for_user(url: &str, workspace: &Path) -> Result<TokenStore, StoreError> {
        let dir = token_dir().ok_or(StoreError::NoConfigDir)?;
        TokenStore::new(&dir, url, workspace)
    }

    /// The token file.
    pub fn path(&self) -> &Path {
        &self.file
    }

    /// The stored credentials of this URL, if any. A file for another URL, or one that is
    /// not a regular file, counts as none.
    pub fn read(&self) -> Result<Option<StoredCredentials>, StoreError> {
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&self.file);
        let file = match opened {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(StoreError::Read { file: self.file.clone(), source }),
        };
        let meta = file.metadata().map_err(|source| StoreError::Read { file: self.file.clone(), source })?;
        if !meta.is_file() {
            return Ok(None);
        }
        if meta.permissions().mode() & 0o077 != 0 {
            // Someone loosened it; tighten it again before reading.
            let _ = file.set_permissions(std::fs::Permissions::from_mode(0o600));
        }
        let parsed: TokenFile = match serde_json::from_reader(std::io::BufReader::new(file)) {
            Ok(parsed) => parsed,
            Err(err) => {
                tracing::warn!("ignoring the unreadable token file {}: {err}", self.file.display());
                return Ok(None);
            }
        };
        Ok((parsed.server_url == self.url).then_some(parsed.credentials))
    }

    /// Replaces the stored credentials (atomically: a reader sees the old file or the new).
    pub fn write(&self, credentials: &StoredCredentials) -> Result<(), StoreError> {
        let dir = self.file.parent().ok_or_else(|| StoreError::NoDirectory(self.file.clone()))?;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|source| StoreError::CreateDirectory { dir: dir.to_path_buf(), source })?;
        let meta = std::fs::symlink_metadata(dir)
            .map_err(|source| StoreError::CreateDirectory { dir: dir.to_path_buf(), source })?;
        if !meta.is_dir() {
            return Err(StoreError::NoDirectory(dir.to_path_buf()));
        }
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        let body = TokenFile { server_url: self.url.clone(), credentials: credentials.clone() };
        let bytes = serde_json::to_vec_pretty(&body).map_err(StoreError::Encode)?;
        let temp = dir.join(format!(".{}.{}.tmp", std::process::id(), rand::random::<u64>()));
        let result = (|| {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
                .open(&temp)?;
            file.write_all(&bytes)?;
            file.sync_all()?;
            std::fs::rename(&temp, &self.file)
        })();
        if let Err(source) = result {
            let _ = std::fs::remove_file(&temp);
            return Err(StoreError::Write { file: self.file.clone(), source });
        }
        Ok(())
    }

    /// Forgets the tokens; whether there were any.
    pub fn remove(&self) -> Result<bool, StoreError> {
        match std::fs::remove_file(&self.file) {
            Ok(()) => Ok(true),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(StoreError::Remove { file: self.file.clone(), source }),
        }
    }
}

/// `mcp-oauth/` of the resolved user config directory.
pub fn token_dir() -> Option<PathBuf> {
    tackle_policy::config::user_config_dir().map(|dir| dir.join(TOKEN_DIR))
}

/// `path` with its longest existing prefix resolved (links followed), the rest appended.
fn resolve_existing(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut current = path.to_path_buf();
    loop {
        if let Ok(resolved) = current.canonicalize() {
            return missing.iter().rev().fold(resolved, |acc: PathBuf, part| acc.join(part));
        }
        match (current.file_name().map(std::ffi::OsStr::to_os_string), current.parent()) {
            (Some(name), Some(parent)) => {
                missing.push(name);
                current = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read().map_err(|err| AuthError::CredentialStoreError(err.to_string()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(&credentials).map_err(|err| AuthError::CredentialStoreError(err.to_string()))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.remove().map(drop).map_err(|err| AuthError::CredentialStoreError(err.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credentials(client: &str) -> StoredCredentials {
        StoredCredentials::new(client.to_owned(), None, vec!["a".into()], Some(1))
    }

    #[test]
    fn tokens_are_private_per_url_and_replaced_whole() {
        let home = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let dir = home.path().join("tackle").join(TOKEN_DIR);
        let one = TokenStore::new(&dir, "https://a.example/mcp", workspace.path()).unwrap();
        let two = TokenStore::new(&dir, "https://b.example/mcp", workspace.path()).unwrap();
        assert_ne!(one.path(), two.path());
        assert!(one.read().unwrap().is_none());
        one.write(&credentials("c1")).unwrap();
        one.write(&credentials("c2")).unwrap();
        assert_eq!(one.read().unwrap().unwrap().client_id, "c2");
        assert!(two.read().unwrap().is_none());
        let mode = std::fs::metadata(one.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        // A file loosened by someone is tightened on the next read.
        std::fs::set_permissions(one.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        one.read().unwrap();
        assert_eq!(std::fs::metadata(one.path()).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(one.remove().unwrap());
        assert!(!one.remove().unwrap());
    }

    #[test]
    fn a_file_of_another_url_or_a_link_gives_no_token() {
        let home = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let dir = home.path().join(TOKEN_DIR);
        let real = TokenStore::new(&dir, "https://a.example/mcp", workspace.path()).unwrap();
        real.write(&credentials("c1")).unwrap();
        // A file copied under another URL's name is not that URL's.
        let other = TokenStore::new(&dir, "https://evil.example/mcp", workspace.path()).unwrap();
        std::fs::copy(real.path(), other.path()).unwrap();
        assert!(other.read().unwrap().is_none());
        std::fs::remove_file(other.path()).unwrap();
        std::os::unix::fs::symlink(real.path(), other.path()).unwrap();
        assert!(other.read().is_err() || other.read().unwrap().is_none());
        // Writing through the link replaces the link, never the target.
        other.write(&credentials("c9")).unwrap();
        assert_eq!(real.read().unwrap().unwrap().client_id, "c1");
    }

    #[test]
    fn tokens_are_never_stored_in_the_workspace() {
        let workspace = tempfile::tempdir().unwrap();
        let inside = workspace.path().join(".config/tackle").join(TOKEN_DIR);
        let err = TokenStore::new(&inside, "https://a.example/mcp", workspace.path()).unwrap_err();
        assert!(err.to_string().contains("inside the workspace"), "{err}");
        // Through a link from outside, too.
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(workspace.path(), outside.path().join("link")).unwrap();
        let linked = outside.path().join("link").join(TOKEN_DIR);
        assert!(TokenStore::new(&linked, "https://a.example/mcp", workspace.path()).is_err());
    }
}
