"""What this machine is: its GPUs and how they are joined (`gpus`), and the installed stack (`stack`)."""
