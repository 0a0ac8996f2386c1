# SPDX-License-Identifier: Apache-2.0
import os
import tempfile

import testtools

from tests.unit import lint_tools

check = lint_tools.load('check_license_headers')


class TestLicenseHeaders(testtools.TestCase):

    def setUp(self):
        super().setUp()
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.top = tmp.name

    def write(self, path, text):
        full = os.path.join(self.top, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w') as f:
            f.write(text)

    def read(self, path):
        with open(os.path.join(self.top, path)) as f:
            return f.read()

    def test_header_first_passes(self):
        self.write('osc_placement/a.py', check.HEADER + 'import os\n')
        self.assertEqual([], check.missing(self.top))
        self.assertEqual(0, check.main([], self.top))

    def test_header_after_a_shebang_passes(self):
        self.write('tools/a.py', '#!/usr/bin/env python3\n' + check.HEADER)
        self.assertEqual([], check.missing(self.top))

    def test_header_then_a_module_docstring_passes(self):
        self.write('tests/a.py', check.HEADER + '"""Why."""\n')
        self.assertEqual([], check.missing(self.top))

    def test_empty_file_passes(self):
        self.write('osc_placement/__init__.py', '')
        self.assertEqual([], check.missing(self.top))

    def test_file_without_the_header_fails(self):
        self.write('benchmarks/a.py', '"""Why."""\n' + check.HEADER)
        self.write('benchmarks/b.py', '\n')
        self.write('benchmarks/notes.txt', 'not Python\n')
        self.assertEqual(['benchmarks/a.py', 'benchmarks/b.py'],
                         check.missing(self.top))
        self.assertEqual(1, check.main([], self.top))

    def test_other_directories_are_not_checked(self):
        self.write('doc/source/conf.py', 'project = "x"\n')
        self.assertEqual([], check.missing(self.top))

    def test_fix_adds_the_header_where_it_belongs(self):
        self.write('tools/a.py', '#!/usr/bin/env python3\n"""Why."""\n')
        self.write('tools/b.py', '"""Why."""\n')
        self.write('tools/c.py', '')
        self.assertEqual(0, check.main(['--fix'], self.top))
        self.assertEqual('#!/usr/bin/env python3\n' + check.HEADER
                         + '"""Why."""\n', self.read('tools/a.py'))
        self.assertEqual(check.HEADER + '"""Why."""\n',
                         self.read('tools/b.py'))
        self.assertEqual('', self.read('tools/c.py'))
        self.assertEqual([], check.missing(self.top))
