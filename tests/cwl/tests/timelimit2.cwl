class: CommandLineTool
cwlVersion: v1.2
inputs: []
outputs: []
requirements:
  ToolTimeLimit:
    timelimit: -1
baseCommand: [sleep, "15"]
