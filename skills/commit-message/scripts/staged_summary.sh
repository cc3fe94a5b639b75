#!/usr/bin/env bash
# Summarises what is staged for the next commit: the branch, each staged file with its
# status and line counts, the totals, and recent commit subjects to match in style.
# Usage: bash staged_summary.sh [repository folder]   (default: the current folder)
# Exit status: 0 with a summary, 1 when nothing is staged, 2 outside a git repository.
set -euo pipefail

repo="${1:-.}"
if ! cd "$repo" 2>/dev/null; then
    echo "No such folder: $repo" >&2
    exit 2
fi

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "Not inside a git repository: $(pwd)" >&2
    exit 2
fi

if git diff --cached --quiet; then
    echo "Nothing is staged. Unstaged and untracked changes:"
    git status --short | head -n 40
    exit 1
fi

branch="$(git symbolic-ref --quiet --short HEAD 2>/dev/null || echo "(detached HEAD)")"
echo "Staged changes on branch ${branch}:"

# Both listings walk the same diff with the same rename detection, so their lines pair up.
mapfile -t statuses < <(git diff --cached -M --name-status | cut -f1)
mapfile -t counts < <(git diff --cached -M --numstat)

files=0
insertions=0
deletions=0
for i in "${!counts[@]}"; do
    IFS=$'\t' read -r added deleted path <<<"${counts[$i]}"
    status="${statuses[$i]:-?}"
    # Git prints "-" for both counts of a binary file.
    if [[ "$added" == "-" ]]; then
        change="binary"
    else
        change="+${added} -${deleted}"
        insertions=$((insertions + added))
        deletions=$((deletions + deleted))
    fi
    printf '  %-4s %-60s %s\n' "${status:0:1}" "$path" "$change"
    files=$((files + 1))
done

echo "${files} file(s) changed, ${insertions} insertion(s)(+), ${deletions} deletion(s)(-)"

if git rev-parse --verify --quiet HEAD >/dev/null; then
    echo
    echo "Recent commit subjects (follow their style):"
    git log --no-decorate --format='  %h %s' -n 8
else
    echo
    echo "This will be the repository's first commit."
fi
