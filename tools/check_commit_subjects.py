#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fail when a commit made since this check was added has a bad subject.

A subject may be at most 72 characters, must not be empty and must not
end with a period. The commits before the one that added this file keep
their long subjects: the base is found in the history itself, so that a
fresh clone needs nothing else. Merge commits are exempt.
"""

import os
import subprocess
import sys

MAX_SUBJECT = 72
CHECKER_PATH = 'tools/check_commit_subjects.py'


def git(repo, *args):
    """The stdout of ``git args`` run in ``repo``, stripped."""
    return subprocess.run(
        ['git', '-C', repo, *args], check=True, capture_output=True,
        text=True).stdout.strip()


def is_git_work_tree(repo):
    """False for a source tarball, where there is no history to check."""
    try:
        return git(repo, 'rev-parse', '--is-inside-work-tree') == 'true'
    except (subprocess.CalledProcessError, FileNotFoundError):
        return False


def base_commit(repo, checker_path=CHECKER_PATH):
    """The commit that added the checker, or None before it is committed."""
    added = git(repo, 'log', '--diff-filter=A', '--format=%H', 'HEAD',
                '--', checker_path).split()
    # git log lists the newest first; the first addition is the base.
    return added[-1] if added else None


def commits_since(repo, base):
    """(hash, subject) of the base and every non-merge commit after it.

    "After" is both reachable from HEAD but not from the base's parents,
    and committed no earlier than the base: a branch begun before the
    check existed and merged later keeps the subjects it was written with.
    """
    base_time = int(git(repo, 'show', '-s', '--format=%ct', base))
    log = git(repo, 'log', '--no-merges', '--format=%H %ct %s', 'HEAD',
              '--not', base + '^@')
    commits = []
    for line in log.splitlines():
        sha, when, subject = (line.split(' ', 2) + [''])[:3]
        if int(when) >= base_time:
            commits.append((sha, subject))
    return commits


def subject_problem(subject):
    """Why ``subject`` is refused, or None when it is fine."""
    if not subject.strip():
        return 'empty subject'
    if len(subject) > MAX_SUBJECT:
        return 'subject of %d characters (at most %d)' % (
            len(subject), MAX_SUBJECT)
    if subject.endswith('.'):
        return 'subject ends with a period'
    return None


def problems(repo):
    """One line per commit since the base whose subject is refused."""
    base = base_commit(repo)
    if base is None:
        return []
    found = []
    for sha, subject in commits_since(repo, base):
        problem = subject_problem(subject)
        if problem:
            found.append('%s %s: %s' % (sha[:12], problem, subject))
    return found


def main(repo=None):
    repo = repo or os.path.dirname(os.path.dirname(os.path.abspath(
        __file__)))
    if not is_git_work_tree(repo):
        print('commit subjects: not a git checkout, nothing to check')
        return 0
    found = problems(repo)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
