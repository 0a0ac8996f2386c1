"""Sphinx configuration for the osc-placement release notes."""

project = 'osc-placement release notes'
copyright = 'osc-placement developers'
extensions = ['reno.sphinxext']
master_doc = 'index'
html_theme = 'alabaster'
