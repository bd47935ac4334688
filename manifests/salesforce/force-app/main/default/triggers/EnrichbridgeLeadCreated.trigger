/**
 * Sends each new Lead created without WF_Enriched_At__c to enrichbridge (EnrichbridgeRecordSender):
 * after insert only, as the record-triggered flow Enrichbridge_Lead_Created, so enrichbridge's own
 * updates never send a record again.
 */
trigger EnrichbridgeLeadCreated on Lead(after insert) {
    EnrichbridgeRecordSender.onInsert('Lead', Trigger.new, Lead.WF_Enriched_At__c);
}
