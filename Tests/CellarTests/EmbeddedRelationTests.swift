@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// A `ToOne` inside embedded objects, with the generated Project (an optional lead `Assignment`
/// and a list of task assignments) and Member: stored and read with the owner, its target read
/// from the store, found through the embedded index and through link conditions, gone with its
/// owner, reading as no target once the target is removed; the read-only backlinks
/// `Member.tasks` and `Member.leading` through them.
@Suite struct EmbeddedRelationTests {
    static func assignment(_ role: String, _ member: Member?) -> Assignment {
        Assignment(role: role, assignee: ToOne(member))
    }

    @Test func linksInsideEmbeddedObjectsAreStoredReadAndQueried() throws {
        let dir = TestDirectory("embedded-relations")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.sub("db"), model: cellarModel())
        defer { store.close() }
        let members: Box<Member> = store.box()
        let projects: Box<Project> = store.box()
        let (ann, bo, cy) = (Member("Ng", "Ann", age: 30, email: "a"), Member("Ng", "Bo", age: 31, email: "b"),
                             Member("Smith", "Cy", age: 32, email: "c"))
        try members.put([ann, bo, cy])
        let roof = Project(name: "roof")
        roof.lead = Self.assignment("lead", ann)
        roof.tasks = [Self.assignment("tiles", bo), Self.assignment("gutter", nil)]
        let shed = Project(name: "shed")
        shed.tasks = [Self.assignment("paint", cy)]
        let none = Project(name: "none")
        try projects.put([roof, shed, none])

        // Read back: ids kept, targets read from the store through the owner's store.
        let read = try #require(try projects.get(roof.id))
        #expect(read.lead?.assignee.targetId == ann.id && read.lead?.assignee.target?.firstName == "Ann")
        #expect(read.tasks.map(\.assignee.targetId) == [bo.id, 0])
        #expect(read.tasks[0].assignee.target?.firstName == "Bo" && read.tasks[1].assignee.target == nil)
        #expect(try projects.get(shed.id)?.tasks.first?.assignee.target?.lastName == "Smith")

        // Conditions on the path, served by the embedded index.
        let led = try projects.query { Project.lead.assignee == ann.id }.build()
        guard case .index = try led.compiled.plan.source else { Issue.record("not served by the embedded index"); return }
        #expect(try led.find().map(\.name) == ["roof"])
        #expect(try projects.query { Project.tasks.assignee == cy.id }.build().find().map(\.name) == ["shed"])
        // Link conditions through the embedded ToOne (on a list: some element's).
        let byNg = try projects.query().link(Project.tasks.assignee) { Member.lastName == "Ng" }.build()
        #expect(try byNg.find().map(\.name) == ["roof"])
        let ledBySmith = try projects.query().link(Project.lead.assignee) { Member.lastName == "Smith" }.build()
        #expect(try ledBySmith.find().isEmpty)

        // Backlinks through the embedded ToOnes, each on its own path: Ann leads roof, Bo has a
        // task in it, Cy one in shed.
        func member(_ id: Id) throws -> Member { try #require(try members.get(id)) }
        #expect(try member(ann.id).leading.map(\.name) == ["roof"] && member(ann.id).tasks.isEmpty)
        #expect(try member(bo.id).tasks.map(\.name) == ["roof"] && member(bo.id).leading.isEmpty)
        #expect(try member(cy.id).tasks.map(\.name) == ["shed"])
        // Read-only: adding to one is refused, and nothing is written.
        let cyAgain = try member(cy.id)
        cyAgain.leading.append(none)
        #expect(throws: CellarError.self) { try members.put(cyAgain) }
        #expect(try projects.get(none.id)?.lead == nil)

        // A removed target reads as none; the link's id stays until the owner is put again.
        #expect(try members.remove(bo.id))
        let after = try #require(try projects.get(roof.id))
        #expect(after.tasks[0].assignee.target == nil && after.tasks[0].assignee.targetId == bo.id)
        // Bo was roof's only Ng on a task (Ann leads it): the link no longer finds it.
        #expect(try byNg.find().isEmpty)
        // A target never put is refused, as for an entity's own ToOne.
        let stray = Project(name: "stray")
        stray.lead = Self.assignment("lead", Member("New", "One", age: 1, email: "n"))
        #expect(throws: CellarError.self) { try projects.put(stray) }

        // The links go with their owner: the embedded index holds only what is left.
        #expect(try projects.remove(roof.id))
        #expect(try led.find().isEmpty)
        store.close()
        _ = try ExportImportTests.verify(dir.sub("db"))
    }
}
