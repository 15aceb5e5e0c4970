"""Code the sample projects share; each agent.py puts this directory's parent on sys.path."""
