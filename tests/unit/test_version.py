# SPDX-License-Identifier: Apache-2.0
import ast
import glob
import os
import re

import testtools

from osc_placement import microversions
from osc_placement.resources import common
from osc_placement import version
from tests.unit import test_microversions

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
# Every client module: the plugin, its commands and its HTTP layer (the
# server reads the vocabulary its own way), but the vocabulary itself.
CLIENT_SOURCES = sorted(
    path for path in (
        glob.glob(os.path.join(TOP, 'osc_placement', '*.py'))
        + glob.glob(os.path.join(TOP, 'osc_placement', 'resources', '*.py')))
    if os.path.basename(path) != 'microversions.py')
# "1.31" in a string, not "16.0" or "v1.2.3"-like parts of longer words.
VERSION_TEXT = re.compile(r'(?<![\w.])1\.\d+\b')
# The features named in ``supports(ver, feature)`` and in help templates.
ASKED = ('supports', 'since', 'before')


def version_literals(source):
    """``(line, text)`` of every microversion written in ``source``: a
    string naming one (help texts and docstrings too) or a ``(1, N)``
    tuple."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and VERSION_TEXT.search(node.value)):
            found.append((node.lineno, node.value))
        elif test_microversions.is_version_tuple(node):
            found.append((node.lineno, ast.unparse(node)))
    return found


class TestOneVocabulary(testtools.TestCase):
    """The client writes microversions down nowhere: it names a feature of
    microversions.FEATURES."""

    def test_no_version_literal_in_the_client(self):
        found = []
        for path in CLIENT_SOURCES:
            with open(path) as source_file:
                found += ['%s:%d: %r' % (os.path.relpath(path, TOP), line,
                                         text)
                          for line, text in version_literals(
                              source_file.read())]
        self.assertEqual([], found, 'name a feature of '
                         'microversions.FEATURES instead (version.render '
                         'for texts)')

    def test_guard_sees_strings_docstrings_and_tuples(self):
        source = ('"""Since 1.31."""\n'
                  'HELP = "requires 1.2 or later"\n'
                  'OK = "16.0 and 1.0x"\n'
                  'if ver >= (1, 39): pass\n')
        self.assertEqual([1, 2, 4], [line for line, _ in
                                     version_literals(source)])

    def test_the_client_sources_are_found(self):
        names = {os.path.basename(path) for path in CLIENT_SOURCES}
        self.assertLessEqual({'version.py', 'explain.py', 'http.py',
                              'allocation_candidate.py'}, names)
        self.assertNotIn('microversions.py', names)

    def test_every_feature_named_in_a_table_exists(self):
        for module, attribute, feature in _named_features():
            self.assertIn(feature, microversions.FEATURES,
                          '%s.%s names %r, which microversions.FEATURES '
                          'has not' % (module.__name__, attribute, feature))

    def test_a_feature_table_is_told_from_other_tables(self):
        self.assertTrue(_is_feature_table((('uuid', 'base'),
                                           ('x', bool, 'trats'))))
        self.assertFalse(_is_feature_table((('a', 'a help text.'),)))
        self.assertFalse(_is_feature_table(('uuid', 'name')))

    def test_every_feature_asked_for_in_code_exists(self):
        for path in CLIENT_SOURCES:
            with open(path) as source_file:
                tree = ast.parse(source_file.read())
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call)
                        and getattr(node.func, 'attr', None) in ASKED):
                    continue
                for arg in node.args:
                    if (isinstance(arg, ast.Constant)
                            and isinstance(arg.value, str)):
                        self.assertIn(
                            arg.value, microversions.FEATURES,
                            '%s:%d asks for %r, which '
                            'microversions.FEATURES has not'
                            % (path, node.lineno, arg.value))


# A feature's name: a snake_case word (a help text or a command line has
# spaces or capitals).
_FEATURE_NAME = re.compile(r'^[a-z][a-z0-9_]*$')


def _is_feature_table(value):
    """A tuple of rows that all end with a feature's name: every table of
    a command module that ties something (an option, a column, a layout)
    to the feature that brought it puts the feature last."""
    return (isinstance(value, tuple) and bool(value) and all(
        isinstance(row, tuple) and row and isinstance(row[-1], str)
        and _FEATURE_NAME.match(row[-1]) for row in value))


def _named_features():
    """``(module, attribute, feature)`` for every feature a command module
    names in a feature table, or as a command's required feature."""
    import importlib
    import inspect
    for path in glob.glob(os.path.join(TOP, 'osc_placement', 'resources',
                                       '*.py')):
        name = os.path.splitext(os.path.basename(path))[0]
        module = importlib.import_module('osc_placement.resources.' + name)
        for attribute, value in vars(module).items():
            if inspect.isclass(value) and issubclass(
                    value, common.PlacementCommand):
                yield module, attribute, value.required_feature
            elif _is_feature_table(value):
                for row in value:
                    yield module, attribute, row[-1]


class TestSupports(testtools.TestCase):

    def test_since_before_and_supports(self):
        self.assertEqual('1.38', version.since('consumer_types'))
        self.assertEqual('1.37', version.before('consumer_types'))
        self.assertTrue(version.supports('1.38', 'consumer_types'))
        self.assertFalse(version.supports('1.37', 'consumer_types'))
        self.assertRaises(ValueError, version.before, 'base')
        self.assertRaises(KeyError, version.since, 'warp_drive')
        self.assertRaises(KeyError, version.supports, '1.39', 'warp_drive')

    def test_supports_takes_the_tuples_explain_keeps(self):
        self.assertTrue(version.supports((1, 39), 'any_of_traits'))
        self.assertFalse(version.supports((1, 38), 'any_of_traits'))

    def test_refuse_raises_upstreams_text_instead_of_false(self):
        self.assertTrue(version.supports('1.21', 'candidate_member_of',
                                         refuse=True))
        error = self.assertRaises(ValueError, version.supports, '1.20',
                                  'candidate_member_of', refuse=True)
        self.assertEqual('Operation or argument is not supported with '
                         'version 1.20; requires at least version 1.21',
                         str(error))

    def test_render_fills_features_and_the_version_before(self):
        self.assertEqual(
            'requires 1.6; stops at 1.37',
            version.render('requires {traits}; stops at '
                           '{consumer_types.before}'))

    def test_render_refuses_an_unknown_name(self):
        error = self.assertRaises(KeyError, version.render, 'GET /{uuid}')
        self.assertIn('uuid', str(error))

    def test_negotiation_ceiling_is_the_version_before_consumer_types(self):
        self.assertEqual('1.37', version.COMPATIBLE_NEGOTIATION_CEILING)


class TestVersionTable(testtools.TestCase):

    def test_negotiate_value_is_supported_too(self):
        self.assertEqual(('1',) + version.SUPPORTED_MICROVERSIONS,
                         version.SUPPORTED_VERSIONS)

    def test_negotiation_cap_is_the_highest_version(self):
        self.assertEqual('1.39', version.MAX_VERSION)
        self.assertEqual(version.MAX_VERSION, version.MAX_VERSION_NO_GAP)


class TestParsing(testtools.TestCase):

    def test_normalises_leading_zeros(self):
        self.assertEqual('1.5', version.parse('1.05'))

    def test_rejects_malformed_versions(self):
        for bad in ('1', '1.', 'a.b', '1.2.3', '', '10.1', ' 1.x'):
            self.assertRaisesRegex(ValueError, 'invalid version number',
                                   version.parse, bad)

    def test_at_least_compares_numerically(self):
        self.assertTrue(version.at_least('1.10', '1.9'))
        self.assertTrue(version.at_least('1.38', '1.38'))
        self.assertFalse(version.at_least('1.9', '1.10'))

    def test_lowest_compares_numerically(self):
        self.assertEqual('1.9', version.lowest('1.10', '1.9', '1.39'))

    def test_supported_values(self):
        for good in ('1', '1.0', '1.29', '1.30', '1.36', '1.39', '1.05'):
            self.assertTrue(version.is_supported(good), good)

    def test_unsupported_values(self):
        for bad in ('1.40', '2.0', '0.9', 'latest', 'abc', '', '2'):
            self.assertFalse(version.is_supported(bad), bad)

    def test_unsupported_message_names_the_range(self):
        self.assertEqual(
            "Unsupported placement API version '1.40': use 1 to negotiate, "
            "or a microversion from 1.0 to 1.39",
            version.unsupported_message('1.40'))


class TestCompare(testtools.TestCase):

    def test_versions_compare_numerically(self):
        self.assertTrue(version.compare('1.10', version.gt('1.9')))
        self.assertTrue(version.compare('1.2', version.lt('1.10')))

    def test_each_predicate(self):
        cases = [
            (version.lt, '1.5', '1.4', '1.5'),
            (version.le, '1.5', '1.5', '1.6'),
            (version.eq, '1.5', '1.5', '1.6'),
            (version.ne, '1.5', '1.6', '1.5'),
            (version.ge, '1.5', '1.5', '1.4'),
            (version.gt, '1.5', '1.6', '1.5'),
        ]
        for factory, bound, passing, failing in cases:
            predicate = factory(bound)
            self.assertTrue(version.compare(passing, predicate))
            self.assertFalse(version.compare(failing, predicate, exc=False))

    def test_failure_text_is_upstreams(self):
        error = self.assertRaises(ValueError, version.compare, '1.1',
                                  version.ge('1.2'))
        self.assertEqual('Operation or argument is not supported with '
                         'version 1.1; requires at least version 1.2',
                         str(error))

    def test_all_joins_failed_predicates_with_and(self):
        error = self.assertRaises(ValueError, version.compare, '1.1',
                                  version.ge('1.2'), version.eq('1.3'))
        self.assertIn('requires at least version 1.2, and requires version '
                      '1.3', str(error))

    def test_any_passes_with_one_and_joins_with_or(self):
        self.assertTrue(version.compare('1.1', version.ge('1.2'),
                                        version.lt('1.2'), op=any))
        error = self.assertRaises(ValueError, version.compare, '1.5',
                                  version.lt('1.2'), version.gt('1.8'),
                                  op=any)
        self.assertIn('requires version less than 1.2, or requires version '
                      'greater than 1.8', str(error))


class _Manager:
    def __init__(self, session, placement=None, requested='1'):
        self.session = session
        self.placement = placement
        self._api_version = {'placement': requested}


class _Client:
    api_version = '1.20'


class _Cmd(version.CheckerMixin):
    def __init__(self, manager):
        self.app = type('App', (), {'client_manager': manager})()

    @version.check(version.ge('1.10'))
    def guarded(self):
        return 'ran'


class TestGetVersion(testtools.TestCase):

    def test_without_session_assumes_maximum_and_sends_nothing(self):
        cmd = _Cmd(_Manager(session=None, placement=None))
        self.assertEqual('1.39', version.get_version(cmd))

    def test_with_session_asks_the_client(self):
        cmd = _Cmd(_Manager(session=object(), placement=_Client()))
        self.assertEqual('1.20', version.get_version(cmd))

    def test_without_client_manager_is_minimum(self):
        self.assertEqual('1.0', version.get_version(object()))

    def test_check_decorator_gates_the_method(self):
        cmd = _Cmd(_Manager(session=object(), placement=_Client()))
        self.assertEqual('ran', cmd.guarded())
        _Client.api_version = '1.9'
        self.addCleanup(setattr, _Client, 'api_version', '1.20')
        self.assertRaisesRegex(ValueError, 'requires at least version 1.10',
                               cmd.guarded)

    def test_mixin_methods(self):
        cmd = _Cmd(_Manager(session=object(), placement=_Client()))
        self.assertTrue(cmd.compare_version(version.ge('1.20')))
        self.assertFalse(cmd.compare_version(version.ge('1.21')))
        self.assertRaises(ValueError, cmd.check_version, version.ge('1.21'))

    def test_requested_version_is_none_when_negotiating(self):
        app = type('App', (), {'client_manager': _Manager(None)})()
        self.assertIsNone(version.requested_version(app))
        app.client_manager._api_version['placement'] = '1.38'
        self.assertEqual('1.38', version.requested_version(app))
