import sys

from groupspec.cli.main import main

sys.exit(main())
