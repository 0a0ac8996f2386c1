# SPDX-License-Identifier: Apache-2.0
"""The rule table and the header parsing (server/microversion.py).

The server asks microversions one way: by the name of a row of
``microversion.RULES`` (``version.supports('same_subtree')``, a route's
``Since('traits')``, a schema table's rule names), which are the names of
the shared vocabulary (tests/unit/test_microversions.py). No server code
holds a version number or compares versions itself.

The check reads the source of the ``osc_placement.server`` package (ast),
so a new ``version >= (1, 40)`` or ``GRANULAR = (1, 25)`` fails here, not
in review.
"""

import ast
import pathlib

import testtools

from osc_placement.server import errors
from osc_placement.server import microversion
from tests.unit import test_microversions

PACKAGE = pathlib.Path(microversion.__file__).parent

# (1, N) literals that are not microversions, by the name they are
# assigned to, with the reason.
NOT_VERSIONS = {
    '_SLOTS': 'candidates/statements.py: column positions of the rows '
              'each read returns, e.g. (1, 10) for an aggregate row',
}
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _is_version_call(node):
    """``Version(1, 25)`` or ``microversion.Version(1, 25)`` with numbers
    in the source."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(
        func, 'id', None)
    return name == 'Version' and any(
        isinstance(arg, ast.Constant) for arg in node.args)


def _names_a_version(node):
    """An operand that reads as a microversion: ``version``,
    ``req.version``, ``MIN_VERSION``, ``Version(...)``."""
    if isinstance(node, ast.Name):
        return 'version' in node.id.lower()
    if isinstance(node, ast.Attribute):
        return 'version' in node.attr.lower()
    return _is_version_call(node)


def _assigned_name(node, parents):
    """The name the literal ``node`` is (part of) the value of, if any."""
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = getattr(node, 'targets', None) or [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            return names[0] if names else None
    return None


def raw_versions(source, filename='<source>'):
    """Each place in ``source`` that holds or compares a microversion
    itself, as ``filename:line: what``."""
    tree = ast.parse(source, filename)
    parents = {child: node for node in ast.walk(tree)
               for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        where = '%s:%d' % (filename, getattr(node, 'lineno', 0))
        if test_microversions.is_version_tuple(node):
            if _assigned_name(node, parents) not in NOT_VERSIONS:
                found.append('%s: version literal %s'
                             % (where, ast.unparse(node)))
        elif _is_version_call(node):
            found.append('%s: %s' % (where, ast.unparse(node)))
        elif isinstance(node, ast.Compare):
            operands = [node.left] + node.comparators
            if (any(isinstance(op, _ORDERING) for op in node.ops)
                    and any(map(_names_a_version, operands))):
                found.append('%s: comparison %s' % (where,
                                                    ast.unparse(node)))
    return found


def _server_sources():
    for path in sorted(PACKAGE.rglob('*.py')):
        yield path.relative_to(PACKAGE.parent), path.read_text()


def _names_asked(source):
    """The rule names of ``<x>.supports('<name>')`` calls in source."""
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == 'supports' and node.args
                and isinstance(node.args[0], ast.Constant)):
            yield node.lineno, node.args[0].value


class TestMicroversion(testtools.TestCase):

    def test_default_is_minimum(self):
        self.assertEqual((1, 0), microversion.parse(None))
        self.assertEqual((1, 0), microversion.parse('compute 2.1'))

    def test_latest(self):
        self.assertEqual((1, 39), microversion.parse('placement latest'))

    def test_comparable_tuple(self):
        version = microversion.parse('placement 1.25')
        self.assertTrue(version >= (1, 25))
        self.assertTrue(version < (1, 26))
        self.assertEqual('1.25', str(version))
        self.assertTrue(version.supports('error_codes'))
        self.assertFalse(version.supports('reserved_equals_total'))

    def test_bad_and_unacceptable(self):
        self.assertRaises(errors.BadRequest, microversion.parse,
                          'placement 1.x')
        err = self.assertRaises(errors.NotAcceptable, microversion.parse,
                                'placement 1.40')
        self.assertEqual({'max_version': '1.39', 'min_version': '1.0'},
                         err.extra)


class TestNoRawMicroversions(testtools.TestCase):

    def test_server_package_asks_the_table_by_name(self):
        found = []
        for name, source in _server_sources():
            found += raw_versions(source, str(name))
        self.assertEqual([], found)

    def test_every_name_asked_is_a_row(self):
        unknown = ['%s:%d: %s' % (name, line, rule)
                   for name, source in _server_sources()
                   for line, rule in _names_asked(source)
                   if rule not in microversion.SINCE]
        self.assertEqual([], unknown)

    def test_the_check_finds_each_way_of_comparing(self):
        # What the package did before the table was asked by name, and
        # what a newcomer might write.
        defects = {
            'GRANULAR = (1, 25)\n': 'version literal (1, 25)',
            'if version >= (1, 25):\n    pass\n': 'version literal',
            'if version >= SAME_SUBTREE:\n    pass\n': 'comparison',
            'x = request.version < MAPPINGS\n': 'comparison',
            'T = [((1, 0), A), ((1, 14), B)]\n': 'version literal (1, 0)',
            'R = (("limit", (1, 16), {}),)\n': 'version literal (1, 16)',
            'F = {"aggregates": (1, 1)}\n': 'version literal (1, 1)',
            'S = D[(1, 28)]\n': 'version literal (1, 28)',
            'ok = v >= microversion.Version(1, 29)\n': 'Version(1, 29)',
        }
        for source, expected in defects.items():
            found = raw_versions(source)
            self.assertTrue(any(expected in what for what in found),
                            (source, found))

    def test_what_is_not_a_version_passes(self):
        clean = [
            'if req.version.supports("granular"):\n    pass\n',
            'if version == kept.version:\n    pass\n',
            '_SLOTS = {_AGGREGATE: (1, 10), _TRAIT: (1, 2, 10)}\n',
            'if served < RESTART_AFTER_SECONDS:\n    pass\n',
            'version = microversion.Version(*version)\n',
        ]
        for source in clean:
            self.assertEqual([], raw_versions(source), source)


class TestRuleTable(testtools.TestCase):

    def test_supports_from_the_rows_version_on(self):
        for rule in microversion.RULES:
            major, minor = rule.since
            self.assertTrue(rule.since.supports(rule.name))
            if minor:
                older = microversion.Version(major, minor - 1)
                self.assertFalse(older.supports(rule.name), rule.name)
