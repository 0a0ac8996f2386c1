# SPDX-License-Identifier: Apache-2.0
"""The candidate package keeps no state of its own: every cache and memo
belongs to the worker's CandidateEngine, and stays valid by a key or a
stamp it holds, never by an object's identity.

Every module of osc_placement/server/candidates is read with ast. The
check fails on a mutable value assigned at module or class level (a
dict, list or set, their comprehensions, or a call of a container, lock
or counter factory), on a ``global`` statement, on a call of ``id()``,
and on ``is``/``is not`` with anything but None, True, False or a
sentinel (a module-level ``NAME = object()``).
"""

import ast
import pathlib
import textwrap

import testtools

from osc_placement.server import candidates

PACKAGE = pathlib.Path(candidates.__file__).parent
# Calls whose result is state that changes: containers, weak maps,
# locks and other threading objects, counters.
MUTABLE_FACTORIES = frozenset({
    'dict', 'list', 'set', 'bytearray', 'defaultdict', 'OrderedDict',
    'Counter', 'deque', 'ChainMap', 'WeakKeyDictionary',
    'WeakValueDictionary', 'WeakSet', 'Lock', 'RLock', 'Condition',
    'Event', 'Semaphore', 'BoundedSemaphore', 'local', 'Queue',
    'SimpleQueue', 'count', 'cycle'})
_MUTABLE_NODES = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp,
                  ast.SetComp)
_CONSTANTS = (None, True, False)


def _called_name(node):
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _is_mutable(value):
    if isinstance(value, _MUTABLE_NODES):
        return True
    return (isinstance(value, ast.Call)
            and _called_name(value) in MUTABLE_FACTORIES)


def _sentinels(tree):
    """The names a module assigns ``object()`` to at its top level."""
    return {target.id for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and _called_name(node.value) == 'object'
            for target in node.targets if isinstance(target, ast.Name)}


def _held_statements(body):
    """The statements of a module or class body, through its blocks (not
    into functions: what a call builds is the caller's)."""
    for node in body:
        yield node
        if isinstance(node, ast.ClassDef):
            yield from _held_statements(node.body)
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            for field in ('body', 'orelse', 'finalbody'):
                yield from _held_statements(getattr(node, field, []))
            for handler in getattr(node, 'handlers', []):
                yield from _held_statements(handler.body)


def _state_assignments(tree):
    for node in _held_statements(tree.body):
        if (isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                and node.value is not None and _is_mutable(node.value)):
            yield node.lineno, 'mutable state at module or class level'


def _shortcuts_of_equality(tree):
    """The identity comparisons written as a shortcut of the equality
    beside them, ``a is b or a == b`` (``a is not b and a != b``): the
    equality decides, identity only answers first when it can."""
    pairs = {ast.Or: (ast.Is, ast.Eq), ast.And: (ast.IsNot, ast.NotEq)}
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.BoolOp):
            continue
        identity, equality = pairs[type(node.op)]
        for first, second in zip(node.values, node.values[1:]):
            if (_comparison(first, identity) is not None
                    and _comparison(first, identity)
                    == _comparison(second, equality)):
                found.add(first)
    return found


def _comparison(node, op):
    """The two operands of ``node`` (as text) if it is one comparison by
    ``op``, else None."""
    if (isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], op)):
        return ast.dump(node.left), ast.dump(node.comparators[0])
    return None


def _identity_uses(tree):
    allowed = _sentinels(tree)
    shortcuts = _shortcuts_of_equality(tree)

    def plain(operand):
        return ((isinstance(operand, ast.Constant)
                 and operand.value in _CONSTANTS
                 and type(operand.value) in (type(None), bool))
                or (isinstance(operand, ast.Name) and operand.id in allowed))

    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            yield node.lineno, 'a global statement'
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == 'id'):
            yield node.lineno, 'id()'
        elif isinstance(node, ast.Compare) and node not in shortcuts:
            operands = [node.left] + node.comparators
            for i, op in enumerate(node.ops):
                if (isinstance(op, (ast.Is, ast.IsNot))
                        and not (plain(operands[i])
                                 or plain(operands[i + 1]))):
                    yield node.lineno, 'an identity comparison'


def defects(source):
    """[(line, what)] of what ``source`` (a module's text) must not
    hold."""
    tree = ast.parse(source)
    return sorted(list(_state_assignments(tree)) + list(_identity_uses(tree)))


class TestNoStateInThePackage(testtools.TestCase):

    def test_the_package_has_its_modules(self):
        self.assertIn('engine.py', {path.name
                                    for path in PACKAGE.glob('*.py')})

    def test_no_module_keeps_state_or_asks_identity(self):
        found = ['%s:%d: %s' % (path.name, line, what)
                 for path in sorted(PACKAGE.glob('*.py'))
                 for line, what in defects(path.read_text())]
        self.assertEqual([], found)

    def test_the_check_finds_each_defect(self):
        source = textwrap.dedent('''
            import collections
            import threading
            import weakref
            _CACHE = {}
            _SEEN = [n for n in range(3)]
            _KEPT = weakref.WeakKeyDictionary()
            _LOCK = threading.Lock()
            _BY_KEY = collections.OrderedDict()
            class Memo:
                shared = set()
            def keep(value):
                global _CACHE
                _CACHE[id(value)] = value
                return value is _CACHE or value is not _SEEN
            def same(a, b):
                return a is b or a == c
            ''')
        self.assertEqual(
            [(5, 'mutable state at module or class level'),
             (6, 'mutable state at module or class level'),
             (7, 'mutable state at module or class level'),
             (8, 'mutable state at module or class level'),
             (9, 'mutable state at module or class level'),
             (11, 'mutable state at module or class level'),
             (13, 'a global statement'),
             (14, 'id()'),
             (15, 'an identity comparison'),
             (15, 'an identity comparison'),
             (17, 'an identity comparison')],
            defects(source))

    def test_what_is_allowed_passes(self):
        source = textwrap.dedent('''
            import types
            MISSING = object()
            LIMIT = 16
            SHAPES = ('a', 'b')
            EMPTY = frozenset()
            SLOTS = types.MappingProxyType({1: (1, 2)})
            class Cache:
                __slots__ = ('known',)
                def __init__(self):
                    self.known = {}
                def get(self, key, default=MISSING):
                    found = self.known.get(key, False)
                    if found is False or found is None:
                        return default
                    return found if default is MISSING else default
            def same(a, b):
                return a is b or a == b
            def differ(a, b):
                return a is not b and a != b
            ''')
        self.assertEqual([], defects(source))
