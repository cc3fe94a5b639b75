//! Unit tests of the ledger, the store and the look at the workspace.
