#!/usr/bin/env bash
# Prints the command that runs a project's tests, one line per kind of project found
# (the first line is the one to start with), judging by the files in the project folder.
# Why it chose each command goes to stderr, so stdout holds only commands.
# Usage: bash detect_test_command.sh [project folder]   (default: the current folder)
# Exit status: 0 when something was found, 1 when no known test setup was found.
set -euo pipefail

dir="${1:-.}"
if ! cd "$dir" 2>/dev/null; then
    echo "No such folder: $dir" >&2
    exit 1
fi

found=0
say() {
    # $1: command, $2: reason
    echo "$1"
    echo "# $1  <- $2" >&2
    found=1
}

has() { [[ -e "$1" ]]; }

# Rust: a workspace manifest tests every member.
if has Cargo.toml; then
    if grep -q '^\[workspace\]' Cargo.toml; then
        say "cargo test --workspace" "Cargo.toml declares a workspace"
    else
        say "cargo test" "Cargo.toml"
    fi
fi

# Go: every package below the module root.
if has go.mod; then
    say "go test ./..." "go.mod"
elif has go.work; then
    say "go test ./..." "go.work"
fi

# Node: only when package.json defines a test script; the lockfile names the package manager.
if has package.json && grep -Eq '"test"[[:space:]]*:' package.json; then
    if has pnpm-lock.yaml; then
        say "pnpm test" "package.json test script, pnpm-lock.yaml"
    elif has yarn.lock; then
        say "yarn test" "package.json test script, yarn.lock"
    elif has bun.lockb || has bun.lock; then
        say "bun run test" "package.json test script, bun lockfile"
    else
        say "npm test" "package.json test script"
    fi
fi

# Python: pytest when the project uses it, else the standard library's unittest.
python_project=0
for marker in pyproject.toml setup.py setup.cfg tox.ini pytest.ini requirements.txt; do
    if has "$marker"; then
        python_project=1
    fi
done
if [[ $python_project -eq 0 ]] && compgen -G "test_*.py" >/dev/null; then
    python_project=1
fi
if [[ $python_project -eq 1 ]]; then
    uses_pytest=0
    if has pytest.ini || has conftest.py || has tests/conftest.py; then
        uses_pytest=1
    elif grep -qs -e '\[tool.pytest' -e 'pytest' pyproject.toml setup.cfg tox.ini requirements.txt requirements-dev.txt; then
        uses_pytest=1
    fi
    if [[ $uses_pytest -eq 1 ]]; then
        runner="pytest"
    else
        runner="unittest discover"
    fi
    if has uv.lock; then
        say "uv run python -m ${runner}" "Python project, uv.lock"
    elif has poetry.lock; then
        say "poetry run python -m ${runner}" "Python project, poetry.lock"
    else
        say "python3 -m ${runner}" "Python project"
    fi
fi

# Anything else with a Makefile test target.
if [[ $found -eq 0 ]] && has Makefile && grep -Eq '^test[[:space:]]*:' Makefile; then
    say "make test" "Makefile has a test target"
fi

if [[ $found -eq 0 ]]; then
    echo "No known test setup in $(pwd); look for a test command in the README or CI configuration." >&2
    exit 1
fi
