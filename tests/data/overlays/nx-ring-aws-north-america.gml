graph [
  node [
    id 0
    label "Ashburn"
  ]
  node [
    id 1
    label "Atlanta"
  ]
  node [
    id 2
    label "Boston"
  ]
  node [
    id 3
    label "Chicago"
  ]
  node [
    id 4
    label "Dallas"
  ]
  node [
    id 5
    label "Denver"
  ]
  node [
    id 6
    label "Hayward"
  ]
  node [
    id 7
    label "Jacksonville"
  ]
  node [
    id 8
    label "Los Angeles"
  ]
  node [
    id 9
    label "Miami"
  ]
  node [
    id 10
    label "Minneapolis"
  ]
  node [
    id 11
    label "Montreal"
  ]
  node [
    id 12
    label "New York"
  ]
  node [
    id 13
    label "Newark"
  ]
  node [
    id 14
    label "Palo Alto"
  ]
  node [
    id 15
    label "Philadelphia"
  ]
  node [
    id 16
    label "Phoenix"
  ]
  node [
    id 17
    label "Saint Louis"
  ]
  node [
    id 18
    label "San Jose"
  ]
  node [
    id 19
    label "Seattle"
  ]
  node [
    id 20
    label "South Bend"
  ]
  node [
    id 21
    label "Toronto"
  ]
  edge [
    source 0
    target 1
  ]
  edge [
    source 0
    target 21
  ]
  edge [
    source 1
    target 2
  ]
  edge [
    source 2
    target 3
  ]
  edge [
    source 3
    target 4
  ]
  edge [
    source 4
    target 5
  ]
  edge [
    source 5
    target 6
  ]
  edge [
    source 6
    target 7
  ]
  edge [
    source 7
    target 8
  ]
  edge [
    source 8
    target 9
  ]
  edge [
    source 9
    target 10
  ]
  edge [
    source 10
    target 11
  ]
  edge [
    source 11
    target 12
  ]
  edge [
    source 12
    target 13
  ]
  edge [
    source 13
    target 14
  ]
  edge [
    source 14
    target 15
  ]
  edge [
    source 15
    target 16
  ]
  edge [
    source 16
    target 17
  ]
  edge [
    source 17
    target 18
  ]
  edge [
    source 18
    target 19
  ]
  edge [
    source 19
    target 20
  ]
  edge [
    source 20
    target 21
  ]
]
