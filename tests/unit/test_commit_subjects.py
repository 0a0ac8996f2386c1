# SPDX-License-Identifier: Apache-2.0
import os
import subprocess
import tempfile

import testtools

from tests.unit import lint_tools

check = lint_tools.load('check_commit_subjects')


class ThrowawayRepo:
    """A git repository in a temporary directory, with commits on demand."""

    def __init__(self, path):
        self.path = path
        self.git('init', '-q')
        self.clock = 1700000000

    def git(self, *args, env=None):
        subprocess.run(['git', '-C', self.path, *args], check=True,
                       capture_output=True, env=env)

    def commit(self, subject, add=None):
        """Commit ``subject``, a second later than the last commit, with
        the file ``add`` written first if given."""
        if add:
            full = os.path.join(self.path, add)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, 'w') as f:
                f.write('# a stand-in for the checker\n')
            self.git('add', add)
        self.clock += 1
        stamp = '@%d +0000' % self.clock
        env = dict(os.environ, GIT_AUTHOR_DATE=stamp,
                   GIT_COMMITTER_DATE=stamp)
        self.git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit',
                 '-q', '--allow-empty', '--allow-empty-message',
                 '-m', subject, env=env)

    def add_checker(self):
        self.commit('Add the commit subject check',
                    add=check.CHECKER_PATH)


class TestCommitSubjects(testtools.TestCase):

    def setUp(self):
        super().setUp()
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.repo = ThrowawayRepo(tmp.name)

    def test_long_subjects_before_the_base_pass(self):
        self.repo.commit('x' * 200)
        self.repo.commit('Ends with a period.')
        self.repo.add_checker()
        self.repo.commit('Fix the widget')
        self.assertEqual([], check.problems(self.repo.path))
        self.assertEqual(0, check.main(self.repo.path))

    def test_no_checker_committed_yet_passes(self):
        self.repo.commit('x' * 200)
        self.assertEqual([], check.problems(self.repo.path))

    def test_seventy_two_characters_pass(self):
        self.repo.add_checker()
        self.repo.commit('x' * 72)
        self.assertEqual([], check.problems(self.repo.path))

    def test_seventy_three_characters_after_the_base_fail(self):
        self.repo.add_checker()
        self.repo.commit('x' * 73)
        found = check.problems(self.repo.path)
        self.assertEqual(1, len(found))
        self.assertIn('subject of 73 characters', found[0])
        self.assertEqual(1, check.main(self.repo.path))

    def test_empty_subject_and_final_period_fail(self):
        self.repo.add_checker()
        self.repo.commit('')
        self.repo.commit('Fix the widget.')
        found = check.problems(self.repo.path)
        self.assertEqual(2, len(found))
        self.assertIn('ends with a period', found[0])
        self.assertIn('empty subject', found[1])

    def test_the_base_commit_itself_is_checked(self):
        self.repo.commit('Start')
        self.repo.commit('y' * 80, add=check.CHECKER_PATH)
        self.assertEqual(1, len(check.problems(self.repo.path)))

    def test_merge_commits_are_exempt(self):
        self.repo.add_checker()
        self.repo.git('checkout', '-q', '-b', 'side')
        self.repo.commit('Work on the side')
        self.repo.git('checkout', '-q', '-')
        self.repo.commit('Work on the main line')
        self.repo.git('-c', 'user.name=t', '-c', 'user.email=t@t', 'merge',
                      '-q', '--no-ff', '-m', 'Merge branch ' + 'z' * 80,
                      'side')
        self.assertEqual([], check.problems(self.repo.path))

    def test_older_branch_merged_after_the_base_keeps_its_subjects(self):
        self.repo.commit('Start')
        self.repo.git('checkout', '-q', '-b', 'old')
        self.repo.commit('w' * 90)
        self.repo.git('checkout', '-q', '-')
        self.repo.add_checker()
        self.repo.git('-c', 'user.name=t', '-c', 'user.email=t@t', 'merge',
                      '-q', '--no-ff', '-m', 'Merge branch old', 'old')
        self.assertEqual([], check.problems(self.repo.path))

    def test_outside_a_git_checkout_nothing_is_checked(self):
        with tempfile.TemporaryDirectory() as bare:
            self.assertEqual(0, check.main(bare))
