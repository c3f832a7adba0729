import sys

from agentassay._integrations.cli import main

sys.exit(main())
