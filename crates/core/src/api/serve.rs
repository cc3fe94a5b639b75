//! What `miniagent serve` decides that is not HTTP: the `[serve]` settings with their
//! empty lists filled in, whether a client may start the session it asks for, and the
//! bearer token. The face only translates requests and answers.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::Context;
use miniagent_protocol::ApprovalMode;
use sha2::{Digest, Sha256};

use super::{Env, StartOptions};
use crate::config::ServeConfig;
use crate::startup;

/// `[serve]`, ready to use: roots resolved (the folder the server started in when none
/// is configured), the configured model when no list of models is.
#[derive(Clone, Debug)]
pub struct ServeSettings {
    pub bind: SocketAddr,
    /// Resolved folders (links followed) a workspace must be in.
    pub roots: Vec<PathBuf>,
    /// The variable the token is read from.
    pub token_env: String,
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    /// The models a session may ask for; the first is the configured one when the
    /// configuration names none.
    pub models: Vec<String>,
    pub approval_modes: Vec<ApprovalMode>,
    pub max_sessions: usize,
    pub max_body_bytes: usize,
    pub events_kept: usize,
    /// The server's own options, which every admitted session starts from.
    base: StartOptions,
}

/// What a client asks to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRequest {
    /// An absolute folder.
    pub workspace: PathBuf,
    /// The configured model when `None`.
    pub model: Option<String>,
    /// `ask` when `None` (or the first allowed mode when `ask` is not allowed).
    pub approval: Option<ApprovalMode>,
}

/// Why a session was not admitted; the message is safe to send to the client (it names
/// no folder of the server's).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the workspace must be an absolute path")]
    RelativeWorkspace,
    #[error("the workspace is not a folder that exists")]
    NoWorkspace,
    #[error("the workspace is outside the folders this server may work in")]
    OutsideRoots,
    #[error("model `{model}` is not offered here (offered: {})", offered.join(", "))]
    Model { model: String, offered: Vec<String> },
    #[error("approval mode {mode} is not allowed here (allowed: {})", modes(allowed))]
    Approval {
        mode: ApprovalMode,
        allowed: Vec<ApprovalMode>,
    },
}

fn modes(modes: &[ApprovalMode]) -> String {
    modes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl ServeSettings {
    /// Reads `[serve]` from the configuration `options` load; the folder the server
    /// started in is `options`' workspace (the current folder unless `-w`). A root that
    /// does not exist is an error: it could be made later by anyone who can write there.
    pub fn load(options: &StartOptions, env: &Env) -> anyhow::Result<Self> {
        let config = startup::load_config(options, env)?;
        let here = startup::resolve_workspace(options)?;
        Self::from_config(config.serve, &config.model.model, here, options.clone())
    }

    fn from_config(
        serve: ServeConfig,
        configured_model: &str,
        here: PathBuf,
        base: StartOptions,
    ) -> anyhow::Result<Self> {
        let roots = if serve.roots.is_empty() {
            vec![here]
        } else {
            serve
                .roots
                .iter()
                .map(|root| {
                    root.canonicalize()
                        .with_context(|| format!("serve.roots: {} cannot be opened", root.display()))
                })
                .collect::<anyhow::Result<_>>()?
        };
        let models = if serve.models.is_empty() {
            vec![configured_model.to_string()]
        } else {
            serve.models
        };
        Ok(Self {
            bind: serve.bind,
            roots,
            token_env: serve.token_env,
            allowed_hosts: serve.allowed_hosts,
            allowed_origins: serve.allowed_origins,
            models,
            approval_modes: serve.approval_modes,
            max_sessions: serve.max_sessions,
            max_body_bytes: serve.max_body_bytes,
            events_kept: serve.events_kept,
            base,
        })
    }

    /// Whether the session `request` asks for may start, and the options it starts
    /// with. The workspace is taken with its links resolved and `..` gone, so a link
    /// inside a root that leads out of it is outside.
    pub fn admit(&self, request: &SessionRequest) -> Result<StartOptions, Refusal> {
        if !request.workspace.is_absolute() {
            return Err(Refusal::RelativeWorkspace);
        }
        let workspace = request
            .workspace
            .canonicalize()
            .ok()
            .filter(|path| path.is_dir())
            .ok_or(Refusal::NoWorkspace)?;
        if !self.roots.iter().any(|root| workspace.starts_with(root)) {
            return Err(Refusal::OutsideRoots);
        }
        if let Some(model) = &request.model
            && !self.models.contains(model)
        {
            return Err(Refusal::Model {
                model: miniagent_text::clean(model).chars().take(200).collect(),
                offered: self.models.clone(),
            });
        }
        let mode = match request.approval {
            Some(mode) => mode,
            None if self.approval_modes.contains(&ApprovalMode::Ask) => ApprovalMode::Ask,
            None => self
                .approval_modes
                .first()
                .copied()
                .unwrap_or(ApprovalMode::ReadOnly),
        };
        if !self.approval_modes.contains(&mode) {
            return Err(Refusal::Approval {
                mode,
                allowed: self.approval_modes.clone(),
            });
        }
        let mut options = self.base.clone();
        options.workspace = Some(workspace);
        options.overrides.approval = Some(mode);
        if let Some(model) = &request.model {
            options.overrides.model = Some(model.clone());
        }
        Ok(options)
    }
}

/// The bearer token every call but `/health` needs. Its `Debug` never shows it.
pub struct ServeToken {
    secret: String,
    digest: [u8; 32],
    generated: bool,
}

impl std::fmt::Debug for ServeToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeToken")
            .field("secret", &"<redacted>")
            .field("generated", &self.generated)
            .finish()
    }
}

/// Why there is no token to serve with.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The variable holds a token too easy to guess, or one a header cannot carry. The
    /// value is never repeated.
    #[error(
        "the token in {variable} must be at least {MIN_TOKEN_CHARS} visible ASCII characters with no spaces; unset it to have one made"
    )]
    Weak { variable: String },
    #[error("cannot read random bytes for a token: {0}")]
    Random(#[from] std::io::Error),
}

/// The shortest token taken from the environment.
const MIN_TOKEN_CHARS: usize = 16;

impl ServeToken {
    fn new(secret: String, generated: bool) -> Self {
        let digest = Sha256::digest(secret.as_bytes()).into();
        Self {
            secret,
            digest,
            generated,
        }
    }

    /// Whether it was made at start (the face prints it once), not read from the
    /// environment.
    pub fn generated(&self) -> bool {
        self.generated
    }

    /// The token itself, for the one line that tells it to the person who started the
    /// server. Nothing else may show it.
    pub fn reveal(&self) -> &str {
        &self.secret
    }

    /// Whether `offered` is the token. Digests are compared, so the time it takes says
    /// nothing about how much of the token was right.
    pub fn matches(&self, offered: &str) -> bool {
        let offered: [u8; 32] = Sha256::digest(offered.as_bytes()).into();
        offered == self.digest
    }
}

/// The token in `variable` (from `env`), else 32 random bytes from the system's
/// generator, base64url-encoded (43 characters).
pub fn serve_token(variable: &str, env: &Env) -> Result<ServeToken, TokenError> {
    if let Some(secret) = env.var(variable).filter(|value| !value.is_empty()) {
        let usable = secret.len() >= MIN_TOKEN_CHARS && secret.bytes().all(|b| b.is_ascii_graphic());
        if !usable {
            return Err(TokenError::Weak {
                variable: variable.to_string(),
            });
        }
        return Ok(ServeToken::new(secret, false));
    }
    Ok(ServeToken::new(random_token(Path::new("/dev/urandom"))?, true))
}

/// 32 bytes of `source` (the kernel's generator), base64url without padding.
fn random_token(source: &Path) -> std::io::Result<String> {
    use base64::Engine;
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open(source)?.read_exact(&mut bytes)?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Folders(PathBuf);

    impl Drop for Folders {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A root with a project in it, a folder beside the root, and a link in the root
    /// that leads to that folder.
    fn folders(name: &str) -> (Folders, PathBuf, PathBuf) {
        let base = std::env::temp_dir().join(format!("miniagent-serve-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("root/project")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::os::unix::fs::symlink(base.join("outside"), base.join("root/escape")).unwrap();
        let base = base.canonicalize().unwrap();
        (Folders(base.clone()), base.join("root"), base.join("outside"))
    }

    fn settings(root: &Path) -> ServeSettings {
        let mut serve = crate::config::built_in().serve;
        serve.roots = vec![root.to_path_buf()];
        ServeSettings::from_config(
            serve,
            "configured-model",
            PathBuf::from("/nowhere"),
            StartOptions::default(),
        )
        .unwrap()
    }

    fn request(workspace: PathBuf) -> SessionRequest {
        SessionRequest {
            workspace,
            model: None,
            approval: None,
        }
    }

    /// A workspace is admitted inside a root only, however the path is written: a `..`
    /// or a link that leads out is outside, a relative path or a missing folder is
    /// refused, and nothing is said of the server's folders.
    #[test]
    fn a_workspace_is_admitted_only_inside_a_root() {
        let (_folders, root, outside) = folders("roots");
        let settings = settings(&root);
        let admitted = settings.admit(&request(root.join("project"))).unwrap();
        assert_eq!(admitted.workspace, Some(root.join("project")));
        assert_eq!(admitted.overrides.approval, Some(ApprovalMode::Ask));
        assert_eq!(admitted.overrides.model, None);
        assert_eq!(
            settings.admit(&request(root.clone())).unwrap().workspace,
            Some(root.clone())
        );
        let refused = |workspace: PathBuf| settings.admit(&request(workspace)).err();
        assert_eq!(refused(outside.clone()), Some(Refusal::OutsideRoots));
        assert_eq!(refused(root.join("escape")), Some(Refusal::OutsideRoots));
        assert_eq!(
            refused(root.join("escape/../outside")),
            Some(Refusal::OutsideRoots)
        );
        assert_eq!(
            refused(root.join("project/../../outside")),
            Some(Refusal::OutsideRoots)
        );
        assert_eq!(
            refused(PathBuf::from("project")),
            Some(Refusal::RelativeWorkspace)
        );
        assert_eq!(refused(root.join("missing")), Some(Refusal::NoWorkspace));
        assert_eq!(
            Refusal::OutsideRoots.to_string(),
            "the workspace is outside the folders this server may work in"
        );
        // A root beside another with a longer name is not inside it.
        std::fs::create_dir_all(root.with_file_name("root-other")).unwrap();
        assert_eq!(
            refused(root.with_file_name("root-other")),
            Some(Refusal::OutsideRoots)
        );
    }

    /// Models and approval modes are those the configuration offers; no mode asked is
    /// `ask`, and a session asking for an unlisted one is refused with what is offered.
    #[test]
    fn a_model_and_a_mode_are_admitted_only_when_offered() {
        let (_folders, root, _) = folders("offer");
        let mut settings = settings(&root);
        let ask = |model: Option<&str>, approval| SessionRequest {
            workspace: root.join("project"),
            model: model.map(str::to_string),
            approval,
        };
        let admitted = settings
            .admit(&ask(Some("configured-model"), Some(ApprovalMode::ReadOnly)))
            .unwrap();
        assert_eq!(
            (admitted.overrides.model, admitted.overrides.approval),
            (Some("configured-model".to_string()), Some(ApprovalMode::ReadOnly))
        );
        assert_eq!(
            settings.admit(&ask(Some("other\u{1b}[2J"), None)).err(),
            Some(Refusal::Model {
                model: "other".into(),
                offered: vec!["configured-model".into()]
            })
        );
        let refused = settings.admit(&ask(None, Some(ApprovalMode::FullAuto))).err();
        assert_eq!(
            refused.map(|why| why.to_string()),
            Some("approval mode full-auto is not allowed here (allowed: read-only, ask)".to_string())
        );
        // Without `ask` allowed, a session that names no mode gets the first allowed.
        settings.approval_modes = vec![ApprovalMode::ReadOnly];
        assert_eq!(
            settings.admit(&ask(None, None)).unwrap().overrides.approval,
            Some(ApprovalMode::ReadOnly)
        );
    }

    /// Empty lists mean the folder the server started in and the configured model.
    #[test]
    fn empty_lists_mean_here_and_the_configured_model() {
        let serve = crate::config::built_in().serve;
        let here = std::env::temp_dir();
        let settings =
            ServeSettings::from_config(serve, "configured-model", here.clone(), StartOptions::default())
                .unwrap();
        assert_eq!(
            (settings.roots, settings.models),
            (vec![here], vec!["configured-model".to_string()])
        );
        let mut missing = crate::config::built_in().serve;
        missing.roots = vec![PathBuf::from("/no/such/root/for/miniagent")];
        let err = ServeSettings::from_config(missing, "m", PathBuf::from("/"), StartOptions::default())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "serve.roots: /no/such/root/for/miniagent cannot be opened"
        );
    }

    /// A made token is 32 random bytes in base64url (43 characters of its alphabet), a
    /// new one each time; one from the environment is used as it is, unless too weak;
    /// neither is ever in `Debug`.
    #[test]
    fn a_token_is_random_or_the_environments_and_never_shown() {
        let made = serve_token("MINIAGENT_SERVE_TOKEN", &Env::empty()).unwrap();
        assert!(made.generated());
        assert_eq!(made.reveal().len(), 43);
        assert!(
            made.reveal()
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "{}",
            made.reveal()
        );
        let other = serve_token("MINIAGENT_SERVE_TOKEN", &Env::empty()).unwrap();
        assert_ne!(made.reveal(), other.reveal());
        assert!(made.matches(made.reveal()));
        assert!(!made.matches(other.reveal()));
        assert!(!made.matches(""));
        let shown = format!("{made:?}");
        assert_eq!(shown, "ServeToken { secret: \"<redacted>\", generated: true }");

        let env = Env::with(|name: &str| match name {
            "MY_TOKEN" => Some("correct-horse-battery-staple".to_string()),
            "SHORT" => Some("hunter2".to_string()),
            "SPACED" => Some("correct horse battery staple".to_string()),
            _ => None,
        });
        let given = serve_token("MY_TOKEN", &env).unwrap();
        assert!(!given.generated());
        assert!(given.matches("correct-horse-battery-staple"));
        assert!(!given.matches("correct-horse-battery-stapl"));
        assert!(!format!("{given:?}").contains("horse"));
        for weak in ["SHORT", "SPACED"] {
            let err = serve_token(weak, &env).unwrap_err().to_string();
            assert_eq!(
                err,
                format!(
                    "the token in {weak} must be at least 16 visible ASCII characters with no spaces; unset it to have one made"
                )
            );
        }
        assert!(random_token(Path::new("/no/such/random/source")).is_err());
    }
}
