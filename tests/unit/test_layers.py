# SPDX-License-Identifier: Apache-2.0
"""Imports point down the layers of tests/unit/layers.py, never up, nor
across from one side to another but to the shared one, and no modules
import each other in a circle.

Every module of osc_placement is read with ast; an import counts wherever
it is written (at module level, inside a function or a class, or as
``importlib.import_module('osc_placement...')``), so importing inside a
function is no way around a layer. architecture.rst shows the same list,
and the last test fails when the two differ.
"""

import ast
import fnmatch
import pathlib
import textwrap

import testtools

from tests.unit import layers

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = 'osc_placement'
ARCHITECTURE = ROOT / 'doc' / 'source' / 'contributor' / 'architecture.rst'
_DYNAMIC_IMPORTS = ('import_module', '__import__')


def package_modules(root=ROOT):
    """{module name: path} of every module of the package."""
    found = {}
    for path in sorted((root / PACKAGE).rglob('*.py')):
        parts = list(path.relative_to(root).with_suffix('').parts)
        if parts[-1] == '__init__':
            parts.pop()
        found['.'.join(parts)] = path
    return found


def layer_places(module, sides=layers.SIDES):
    """Every (side, position, Layer) whose names match ``module``."""
    return [(side, position, layer)
            for side, _, table in sides
            for position, layer in enumerate(table)
            for pattern in layer.modules
            if fnmatch.fnmatchcase(module, pattern)]


def _absolute(module, is_package, node):
    """The module a ``from ... import`` names, relative ones resolved."""
    if not node.level:
        return node.module
    base = module.split('.')[:None if is_package else -1]
    base = base[:len(base) - node.level + 1]
    return '.'.join(base + ([node.module] if node.module else []))


def _known(name, modules):
    """``name`` or its nearest enclosing package among ``modules``."""
    while name and name not in modules:
        name = name.rpartition('.')[0]
    return name or None


def _dynamic_target(node):
    """The module a call like ``importlib.import_module('x.y')`` loads."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(
        func, 'id', None)
    if name in _DYNAMIC_IMPORTS and node.args and isinstance(
            node.args[0], ast.Constant) and isinstance(node.args[0].value,
                                                       str):
        return node.args[0].value
    return None


def _named_targets(node, module, is_package, modules):
    """The package's modules one import node names, unresolved."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        source = _absolute(module, is_package, node)
        return [source + '.' + alias.name
                if source + '.' + alias.name in modules else source
                for alias in node.names]
    if isinstance(node, ast.Call):
        target = _dynamic_target(node)
        return [target] if target else []
    return []


def imports_of(module, source, modules, is_package=False):
    """[(imported module, line)] for each import anywhere in ``source``:
    the package's own modules as the module they load, others (the
    libraries) as named."""
    found = []
    for node in ast.walk(ast.parse(source)):
        for name in _named_targets(node, module, is_package, modules):
            if name and name.split('.')[0] == PACKAGE:
                name = _known(name, modules)
            if name and name != module:
                found.append((name, node.lineno))
    return found


def import_graph(modules):
    """{module: [(imported module, line)]} of the whole package."""
    return {module: imports_of(module, path.read_text(), modules,
                               path.name == '__init__.py')
            for module, path in modules.items()}


def wrong_way(module, target, sides=layers.SIDES):
    """Why ``module`` may not import ``target``, or None if it may."""
    (side, position, layer), = layer_places(module, sides)
    if any(fnmatch.fnmatchcase(target, bar) for bar in layer.bars):
        return 'layer %s %s never imports it' % (side, layer.name)
    if target.split('.')[0] != PACKAGE:
        return None
    (to_side, to_position, to_layer), = layer_places(target, sides)
    if side != to_side and to_side != layers.SHARED_SIDE:
        return 'the %s imports the %s' % (side, to_side)
    if side != to_side:
        return None
    if to_position < position:
        return 'layer %s %s imports layer %s %s above it' % (
            side, layer.name, side, to_layer.name)
    if to_position == position and not layer.within:
        return 'layer %s %s does not import within itself' % (
            side, layer.name)
    return None


def violations(graph, sides=layers.SIDES):
    """One line per import against the layers, naming both modules."""
    found = []
    for module, imported in sorted(graph.items()):
        for target, line in imported:
            why = wrong_way(module, target, sides)
            if why:
                found.append('%s (line %d) imports %s: %s' % (
                    module, line, target, why))
    return found


def cycles(graph):
    """Each group of modules that import each other in a circle, as the
    circle ``a -> b -> a`` (Tarjan's strongly connected components)."""
    edges = {module: sorted({target for target, _ in imported
                             if target in graph})
             for module, imported in graph.items()}
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in edges.get(module, ()):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
                on_stack.discard(group[-1])
            if len(group) > 1:
                found.append(_circle(sorted(group), edges))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def _circle(group, edges):
    """A path through ``group`` from its first module back to it."""
    members = set(group)
    path, seen = [group[0]], {group[0]}
    while True:
        step = [t for t in edges[path[-1]] if t in members]
        if group[0] in step:
            return ' -> '.join(path + [group[0]])
        nxt = next((t for t in step if t not in seen), step[0])
        path.append(nxt)
        seen.add(nxt)


def _groups(names, root, modules):
    """The modules ``names`` of one layer as architecture.rst lists them:
    one group per directory under ``root``, the directory first (``db/``)
    then its modules' names; modules of ``root`` itself by name."""
    groups = {}
    for module in sorted(names):
        rest = module[len(root) + 1:].split('.') if module != root else []
        if module != root and modules[module].name == '__init__.py':
            groups.setdefault('/'.join(rest) + '/', [])
        elif len(rest) > 1:
            groups.setdefault('/'.join(rest[:-1]) + '/', []).append(rest[-1])
        else:
            groups.setdefault('', []).append(rest[0] if rest else '__init__')
    return [' '.join(([where] if where else []) + sorted(members))
            for where, members in sorted(groups.items())]


def render(modules, sides=layers.SIDES):
    """The layer list architecture.rst shows, from the table and the
    modules there are."""
    lines = []
    for side, root, table in sides:
        lines.append('%s (%s/)' % (side, root.replace('.', '/')))
        for position, layer in enumerate(table):
            names = [module for module in modules
                     if layer_places(module, sides)
                     == [(side, position, layer)]]
            head = '  %-14s' % (layer.name + (' *' if layer.within else ''))
            for group in _groups(names, root, modules):
                lines.extend(textwrap.wrap(
                    group, width=76, initial_indent=head,
                    subsequent_indent=' ' * len(head),
                    break_on_hyphens=False))
                head = ' ' * len(head)
    return '\n'.join(lines)


class TestLayers(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.modules = package_modules()

    def test_every_module_is_in_one_layer(self):
        wrong = ['%s: %d layers' % (module, len(layer_places(module)))
                 for module in sorted(self.modules)
                 if len(layer_places(module)) != 1]
        self.assertEqual([], wrong)

    def test_every_layer_name_matches_a_module(self):
        unused = [pattern for _, _, table in layers.SIDES
                  for layer in table for pattern in layer.modules
                  if not fnmatch.filter(self.modules, pattern)]
        self.assertEqual([], unused)

    def test_imports_point_down(self):
        self.assertEqual([], violations(import_graph(self.modules)))

    def test_no_import_cycle(self):
        self.assertEqual([], cycles(import_graph(self.modules)))

    def test_architecture_shows_the_layers(self):
        expected = textwrap.indent(render(self.modules), '    ')
        self.assertTrue(expected in ARCHITECTURE.read_text(),
                        'architecture.rst should show this literal block '
                        '(the layer list of tests/unit/layers.py):\n\n'
                        + expected)


class TestGuard(testtools.TestCase):
    """The checks above catch what they are for."""

    MODULES = dict.fromkeys((
        'osc_placement', 'osc_placement.version', 'osc_placement.http',
        'osc_placement.microversions', 'osc_placement.server.microversion',
        'osc_placement.server', 'osc_placement.server.db',
        'osc_placement.server.db.tables', 'osc_placement.server.objects',
        'osc_placement.server.objects.consumer',
        'osc_placement.server.errors', 'osc_placement.server.json_encoding',
        'osc_placement.server.app', 'osc_placement.server.handlers',
        'osc_placement.server.handlers.usage'))

    def _graph(self, module, source):
        return {module: imports_of(module, source, self.MODULES)}

    def test_an_import_up_inside_a_function_is_caught(self):
        graph = self._graph('osc_placement.server.db.tables', (
            'def f():\n'
            '    from osc_placement.server.objects import consumer\n'))
        self.assertEqual(
            ['osc_placement.server.db.tables (line 2) imports '
             'osc_placement.server.objects.consumer: layer server db '
             'imports layer server objects above it'], violations(graph))

    def test_a_dynamic_import_up_is_caught(self):
        graph = self._graph('osc_placement.server.errors', (
            'import importlib\n'
            'importlib.import_module("osc_placement.server.app")\n'))
        self.assertEqual(1, len(violations(graph)))

    def test_a_relative_import_is_resolved(self):
        graph = self._graph('osc_placement.server.db.tables',
                            'from ..objects import consumer\n')
        self.assertEqual(
            [('osc_placement.server.objects.consumer', 1)],
            graph['osc_placement.server.db.tables'])

    def test_an_import_within_a_closed_layer_is_caught(self):
        graph = self._graph('osc_placement.server.errors',
                            'from osc_placement.server import '
                            'json_encoding\n')
        self.assertEqual(
            ['osc_placement.server.errors (line 1) imports '
             'osc_placement.server.json_encoding: layer server base does '
             'not import within itself'], violations(graph))

    def test_a_barred_library_is_caught(self):
        graph = self._graph('osc_placement.server.handlers.usage',
                            'import sqlalchemy as sa\n')
        self.assertEqual(
            ['osc_placement.server.handlers.usage (line 1) imports '
             'sqlalchemy: layer server handlers never imports it'],
            violations(graph))

    def test_the_client_importing_the_server_is_caught(self):
        graph = self._graph('osc_placement.http',
                            'from osc_placement.server import errors\n')
        self.assertEqual(
            ['osc_placement.http (line 1) imports '
             'osc_placement.server.errors: the client imports the server'],
            violations(graph))

    def test_both_sides_may_import_the_shared_side(self):
        graph = {**self._graph('osc_placement.version',
                               'from osc_placement import microversions\n'),
                 **self._graph('osc_placement.server.microversion',
                               'from osc_placement import microversions\n')}
        self.assertEqual([], violations(graph))

    def test_the_shared_side_importing_a_side_is_caught(self):
        graph = self._graph('osc_placement.microversions',
                            'from osc_placement import version\n'
                            'from osc_placement.server import errors\n')
        self.assertEqual(
            ['osc_placement.microversions (line 1) imports '
             'osc_placement.version: the shared imports the client',
             'osc_placement.microversions (line 2) imports '
             'osc_placement.server.errors: the shared imports the server'],
            violations(graph))

    def test_a_circle_is_found(self):
        graph = {'a': [('b', 1)], 'b': [('c', 1)], 'c': [('a', 1)],
                 'd': [('a', 1)]}
        self.assertEqual(['a -> b -> c -> a'], cycles(graph))
