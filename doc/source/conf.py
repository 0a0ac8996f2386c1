"""Sphinx configuration for the osc-placement documentation."""

project = 'osc-placement'
copyright = 'osc-placement developers'

extensions = [
    'cliff.sphinxext',
]

# The command reference is generated from the command classes themselves.
autoprogram_cliff_application = 'openstack'
# Options every OpenStackClient command has; documented by OSC itself.
autoprogram_cliff_ignored = [
    '--help', '--format', '--column', '--max-width', '--fit-width',
    '--print-empty', '--prefix', '--noindent', '--quote', '--sort-column',
    '--sort-ascending', '--sort-descending',
]

master_doc = 'index'
exclude_patterns = []
html_theme = 'alabaster'
pygments_style = 'sphinx'
